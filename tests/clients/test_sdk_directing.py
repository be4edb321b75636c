"""The SDK's directors' tools and arenas through the whole platform: a Swiss with an
invitation code and manual rounds edited before the start, a player banned for good, a result
corrected by hand (the standings and the players' feed say so), an announcement, the next round
by hand, pause and resume, the audit log, an early end (resent: answered as the first) and the
exports as whole files; an arena whose players are paired by themselves, pause and come back."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import uuid

import pytest
from tafel.client import TafelClient
from tafel.errors import IllegalMove as FailedPrecondition
from tafel.errors import PermissionDenied, TafelError
from tafel.play.v1 import tournaments_pb2 as tp
from tafel.requests import duration

from tests.platforms import ENV, platform_fixture
from tools.platform import Platform

# An arena shorter than the five minutes players get, paired and ranked quickly.
ARENA_ENV = {**ENV, "TAFEL_ARENA_MIN_S": "5", "TAFEL_ARENA_WAVE_S": "0.2", "TAFEL_ARENA_STANDINGS_S": "0.2"}


platform = platform_fixture(env=ARENA_ENV)


async def account(address: str, prefix: str) -> TafelClient:
    client = await TafelClient.connect(address)
    await client.register(f"{prefix}{uuid.uuid4().hex[:8]}", "correct horse battery")
    return client


async def until(probe: object, timeout_s: float = 20.0) -> object:
    """Ask `probe()` until it answers something true."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        answer = await probe()  # type: ignore[operator]
        if answer:
            return answer
        assert asyncio.get_running_loop().time() < deadline, "waited in vain"
        await asyncio.sleep(0.2)


async def test_a_directed_swiss(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    org, ann, bob, cas = [await account(address, p) for p in ("org", "ann", "bob", "cas")]
    t = await org.create_tournament(
        name="Club night",
        game="connect4",
        format=tp.TOURNAMENT_FORMAT_SWISS,
        rounds=3,
        capacity=8,
        entry=tp.EntryConditions(invitation_required=True),
        invitation_code="club-2026",
        manual_rounds=True,
    )
    tid = t.tournament_id
    assert t.can_direct and t.invitation_code == "club-2026"
    assert not (await ann.get_tournament(tid)).can_direct
    assert (await ann.get_tournament(tid)).invitation_code == ""  # only directors see it

    with pytest.raises(PermissionDenied) as refused:
        await ann.join_tournament(tid)
    assert refused.value.reason == "BAD_INVITATION_CODE"
    for player in (ann, bob, cas):
        await player.join_tournament(tid, invitation_code="club-2026")

    # Edited before the start: only the fields named change; a player may not.
    edited = await org.update_tournament(tid, name="Club night (Friday)", capacity=6)
    assert (edited.name, edited.capacity, edited.rounds) == ("Club night (Friday)", 6, 3)
    with pytest.raises(PermissionDenied) as refused:
        await ann.update_tournament(tid, name="Mine")
    assert refused.value.reason == "NOT_ORGANISER"

    # Banned for good: out, and refused when trying again (idempotent for the director).
    await org.remove_player(tid, cas.player.player_id, ban=True, reason="two accounts")
    await org.remove_player(tid, cas.player.player_id, ban=True, reason="two accounts")
    with pytest.raises(PermissionDenied) as refused:
        await cas.join_tournament(tid, invitation_code="club-2026")
    assert refused.value.reason == "BANNED_FROM_TOURNAMENT"

    started = await org.start_tournament(tid)
    assert started.state == tp.TOURNAMENT_STATE_RUNNING
    first = await until(lambda: org.tournament_round(tid, 1))
    game = next(g for g in first.games if g.game_id)  # type: ignore[attr-defined]
    assert {p.player_id for p in game.players} == {ann.player.player_id, bob.player.player_id}

    # A dispute: the director decides the game (still being played: ended first), ann wins.
    ranks = [1 if p.player_id == ann.player.player_id else 2 for p in game.players]
    corrected = await org.correct_result(tid, round_number=1, board=game.board, ranks=ranks, reason="a disputed flag")
    assert corrected.game.state == tp.TOURNAMENT_GAME_STATE_CORRECTED
    assert corrected.game.correction_reason == "a disputed flag"
    again = await org.correct_result(tid, round_number=1, board=game.board, ranks=ranks, reason="a disputed flag")
    assert list(again.game.points) == list(corrected.game.points)  # the same ranks change nothing
    table = await ann.standings(tid)
    top = table.standings[0]
    assert top.player.player_id == ann.player.player_id and top.points == 1

    sent = await org.announce(tid, "Round 2 starts when everyone is back from the bar.", request_id="ann-1")
    assert sent == 2
    assert await org.announce(tid, "Round 2 starts when everyone is back from the bar.", request_id="ann-1") == 2

    # Manual rounds: the next round waits for the director; a second start while it is played is
    # refused.
    await org.pause_tournament(tid)
    assert (await org.get_tournament(tid)).paused
    await org.resume_tournament(tid)
    assert not (await org.get_tournament(tid)).paused
    nxt = await org.start_next_round(tid)
    assert nxt.round.number == 2
    with pytest.raises(FailedPrecondition) as busy:
        await org.start_next_round(tid)
    assert busy.value.reason in ("ROUND_IN_PROGRESS", "NO_NEXT_ROUND")

    # The players' feed tells the correction and the announcement.
    kinds: dict[str, tp.TournamentEvent] = {}

    async def read_feed() -> None:
        async for event in ann.watch_tournament(tid):
            kinds.setdefault(event.WhichOneof("kind") or "", event)
            if "announcement" in kinds and "result_corrected" in kinds:
                return

    await asyncio.wait_for(read_feed(), 20)
    assert kinds["result_corrected"].result_corrected.reason == "a disputed flag"
    assert kinds["announcement"].announcement.text.startswith("Round 2 starts")

    audit = await org.tournament_audit(tid)
    actions = [e.action for e in audit]
    for action in ("UpdateTournament", "RemovePlayer", "CorrectResult", "Announce", "StartNextRound"):
        assert action in actions, actions
    with pytest.raises(PermissionDenied):
        await ann.tournament_audit(tid)

    ended = await org.terminate_tournament(tid, "the hall closes")
    assert ended.state == tp.TOURNAMENT_STATE_FINISHED and ended.terminated
    # Resent after it did its work (a lost answer): the tournament, as the first try answered.
    assert (await org.terminate_tournament(tid, "the hall closes")).terminated
    assert (await ann.standings(tid)).final

    # Exports: whole files assembled from the chunks; anyone signed in may export.
    files = await bob.export_tournament(tid, format="csv")
    names = sorted(files)
    assert [n.rsplit("-", 1)[-1] for n in names] == ["games.csv", "pairings.csv", "standings.csv"], names
    standings_csv = next(v for k, v in files.items() if k.endswith("standings.csv")).decode()
    rows = list(csv.reader(io.StringIO(standings_csv)))
    assert ann.player.username in standings_csv and len(rows) >= 3, rows[:3]
    parts = await bob.export_tournament(tid, format="json", parts=["standings"])
    assert len(parts) == 1
    assert json.loads(next(iter(parts.values())))  # valid JSON
    with pytest.raises(TafelError):
        await bob.export_tournament(tid, format="xml")
    for client in (org, ann, bob, cas):
        await client.close()


async def test_an_arena_pairs_players_who_pause_and_come_back(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    org, ann, bob, cid = [await account(address, p) for p in ("aro", "arn", "arb", "arc")]
    arena = await org.create_tournament(
        name="Lunch arena", game="connect4", format=tp.TOURNAMENT_FORMAT_ARENA, arena_duration=duration(60)
    )
    tid = arena.tournament_id
    for player in (ann, bob, cid):
        await player.join_tournament(tid)
    started = await org.start_tournament(tid)
    assert started.HasField("ends_at")
    with pytest.raises(FailedPrecondition) as refused:
        await org.pause_arena_play(tid)  # not a player of it
    assert refused.value.reason == "NOT_IN_TOURNAMENT"

    async def paired() -> object:
        games = await ann.tournament_games(tid, player_id=ann.player.player_id)
        return [g for g in games if g.state == tp.TOURNAMENT_GAME_STATE_PLAYING]

    playing = await until(paired)
    game = playing[0]  # type: ignore[index]
    assert game.round == 0 and ann.player.player_id in {p.player_id for p in game.players}
    clients = {c.player.player_id: c for c in (ann, bob, cid)}
    rival = next(clients[p.player_id] for p in game.players if p.player_id != ann.player.player_id)
    await rival.resign(game.game_id)

    # Ann steps away: marked paused, not paired again until she comes back.
    await ann.pause_arena_play(tid, paused=True)

    async def ann_row(paused: bool) -> object:
        rows = (await org.standings(tid)).standings
        mine = [r for r in rows if r.player.player_id == ann.player.player_id]
        return mine and mine[0].paused == paused and mine[0].wins == 1 and mine[0]

    row = await until(lambda: ann_row(True))
    assert row.points == 2 and row.streak == 1  # type: ignore[attr-defined]
    await asyncio.sleep(1.0)  # a few waves: none pairs a paused player
    assert not await paired()
    await ann.pause_arena_play(tid, paused=False)
    await until(lambda: ann_row(False))

    # Back: paired again with someone free who was not her last opponent (the other two, paired
    # meanwhile, are let go).
    async def paired_again() -> object:
        for g in await org.tournament_games(tid):
            seats = [p.player_id for p in g.players]
            if g.state == tp.TOURNAMENT_GAME_STATE_PLAYING and ann.player.player_id not in seats:
                await clients[seats[0]].resign(g.game_id)
        return await paired()

    await until(paired_again)
    ended = await org.terminate_tournament(tid, "lunch is over")
    assert ended.terminated
    for client in (org, ann, bob, cid):
        await client.close()
