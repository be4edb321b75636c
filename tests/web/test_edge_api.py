"""Every public RPC over the web edge (Connect, from Python: tools/connect_channel over httpx),
through the unchanged Python SDK and the generated stubs, against the real platform. Refused
calls carry the same status, message and ErrorInfo reason as over native gRPC; read-only calls
answer the same messages. The last test checks that no public method was left out."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import pytest
from tafel.chat import channel as chat_channel
from tafel.client import TafelClient
from tafel.connect4.v1 import connect4_pb2
from tafel.errors import IllegalMove, NotFound, Unauthenticated
from tafel.play.v1 import (
    bots_pb2,
    bots_pb2_grpc,
    challenges_pb2,
    notices_pb2,
    play_pb2,
    safety_pb2,
    social_pb2,
    tournaments_pb2,
)
from tafel.play.v1 import tournaments_pb2 as T
from tafel.requests import duration

from gateway.bot_requests import public_id
from kit.errors import reason_of
from tests.web.conftest import Connect
from tools.connect_channel import ConnectChannel

TIMEOUT_S = 60.0


async def refusal(call: Any) -> tuple[grpc.StatusCode, str, str | None]:
    """Await a call that must be refused: its code, message and ErrorInfo reason."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    error = caught.value
    return error.code(), str(error.details()), reason_of(error)


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def first(stream: AsyncIterator[Any]) -> Any:
    async for item in stream:
        return item
    raise AssertionError("the stream ended before its first message")


async def seats_of(clients: list[TafelClient], game_id: str) -> dict[int, TafelClient]:
    by_seat = {}
    for client in clients:
        seat = (await client.wait_for_game(game_id)).seat
        by_seat[seat] = client
    return by_seat


@pytest.mark.parametrize("codec", ["proto", "json"])
async def test_accounts_and_game_types(edge: Connect, native: Connect, codec: str) -> None:
    alice = await edge(codec, guest=False)
    name = f"web{secrets.token_hex(4)}"
    registered = await alice.register(name, "password-123")
    assert registered.username == name and not registered.guest
    again = await edge(codec, guest=False)
    assert (await again.sign_in(name, "password-123")).player_id == registered.player_id
    assert (await again.me()).player_id == registered.player_id
    guest = await edge(codec)
    assert guest.player.guest and (await guest.me()) == guest.player
    assert [t.game for t in await guest.game_types()] == [t.game for t in await (await native()).game_types()]
    with pytest.raises(Unauthenticated) as wrong:
        await again.sign_in(name, "password-999")
    assert wrong.value.reason == "BAD_CREDENTIALS"
    # A refreshed token works; a signed-out one is refused, with the same reason as over gRPC.
    old_token = again.session.token  # type: ignore[union-attr]
    refreshed = await again.refresh_session()
    assert refreshed.player.player_id == registered.player_id
    await again.sign_out()
    edge_refusal = await refusal(alice.accounts.GetMe(play_pb2.GetMeRequest(), metadata=bearer(refreshed.token)))
    over_grpc = await native(guest=False)
    grpc_refusal = await refusal(over_grpc.accounts.GetMe(play_pb2.GetMeRequest(), metadata=bearer(old_token)))
    assert edge_refusal[0] is grpc.StatusCode.UNAUTHENTICATED and edge_refusal == grpc_refusal


@pytest.mark.parametrize("codec", ["proto", "json"])
async def test_a_room_game_played_to_the_end_over_the_edge(edge: Connect, native: Connect, codec: str) -> None:
    host, guest, spectator = await edge(codec), await edge(codec), await edge(codec)
    room = await host.create_room("connect4", per_move_s=30, watchable=True)  # spectators may watch
    assert (await guest.get_room(room.code)).code == room.code
    watching_room = asyncio.create_task(guest.wait_room_started(room.code))
    joined = await guest.join_room(room.code)
    assert {p.player_id for p in joined.players} == {host.player.player_id, guest.player.player_id}
    started = await host.start_room(room.code)
    assert started.game_id
    assert (await asyncio.wait_for(watching_room, TIMEOUT_S)).game_id == started.game_id
    game_id = started.game_id
    by_seat = await seats_of([host, guest], game_id)
    watched = asyncio.create_task(_events(spectator.watch(game_id)))
    # The live list, the same over both transports.
    live = await spectator.list_live_games("connect4")
    assert live == await (await native()).list_live_games("connect4")

    # A refused move: the same status, message and reason over both transports.
    wrong_seat = play_pb2.SubmitMoveRequest(game_id=game_id, expected_version=0, request_id="r-wrong")
    wrong_seat.move.connect4.CopyFrom(connect4_pb2.Move(column=3))
    mover_native = await native(guest=False)
    mover_native.session = by_seat[1].session
    over_edge = await refusal(by_seat[1].games.SubmitMove(wrong_seat, metadata=by_seat[1].metadata(), timeout=10))
    over_grpc = await refusal(mover_native.games.SubmitMove(wrong_seat, metadata=mover_native.metadata(), timeout=10))
    assert over_edge == over_grpc and over_edge[0] in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.PERMISSION_DENIED)
    with pytest.raises(IllegalMove) as illegal:
        await by_seat[0].submit_move(game_id, connect4_pb2.Move(column=9), expected_version=0)
    assert illegal.value.reason

    # Seat 0 stacks column 0, seat 1 column 1: seat 0 wins on the 7th move.
    version = 0
    for turn in range(7):
        answer = await by_seat[turn % 2].submit_move(game_id, connect4_pb2.Move(column=turn % 2), expected_version=version)
        version = answer.version
    assert answer.events[-1].WhichOneof("kind") == "ended"
    events = await asyncio.wait_for(watched, TIMEOUT_S)
    assert events[-1].WhichOneof("kind") == "ended"
    # The same events, byte for byte, as a native watcher replaying the game.
    replay = [e async for e in (await native()).watch(game_id)]
    assert [e.SerializeToString() for e in events] == [e.SerializeToString() for e in replay]

    assert game_id in [g.game_id for g in (await host.list_my_games()).games]
    record = await host.get_record(game_id)
    assert record.game == "connect4" and len(record.actions) == 7
    records = await host.list_records(player_id=host.player.player_id)
    assert game_id in [r.game_id for r in records.records]
    assert (await guest.get_game(game_id)) == (await mover_native.get_game(game_id))

    # Leaving a room: a three-seat one, which a second player does not fill (a full room starts).
    other_host, leaver = await edge(codec), await edge(codec)
    other = await other_host.create_room("coloursquare", seats=3)
    await leaver.join_room(other.code)
    left = await leaver.leave_room(other.code)
    assert [p.player_id for p in left.players] == [other_host.player.player_id]


async def _events(stream: AsyncIterator[Any]) -> list[Any]:
    return [event async for event in stream]


async def test_matchmaking_resign_and_watch_resume_over_the_edge(edge: Connect) -> None:
    first_player, second_player = await edge("json"), await edge("proto")
    matches = await asyncio.wait_for(
        asyncio.gather(first_player.find_match("connect4", per_move_s=30), second_player.find_match("connect4", per_move_s=30)),
        TIMEOUT_S,
    )
    assert matches[0].game_id == matches[1].game_id and {m.seat for m in matches} == {0, 1}
    game_id = matches[0].game_id
    by_seat = {m.seat: c for m, c in zip(matches, (first_player, second_player), strict=True)}
    await by_seat[0].submit_move(game_id, connect4_pb2.Move(column=3), expected_version=0)
    # Resume from the first event: only what came after it, nothing twice.
    seen: list[Any] = []
    async for event in by_seat[1].watch(game_id, stop_at_end=False):
        seen.append(event)
        if len(seen) == 2:
            break
    resigned = await by_seat[1].resign(game_id)
    assert resigned.events[-1].WhichOneof("kind") == "ended"
    rest = [e async for e in by_seat[0].watch(game_id, after_event_id=seen[0].event_id)]
    assert [e.event_id for e in rest][: len(seen) - 1] == [e.event_id for e in seen[1:]]
    assert rest[-1].WhichOneof("kind") == "ended"
    assert len({e.event_id for e in rest}) == len(rest)


async def test_bot_requests_are_served_over_the_edge(edge: Connect, edge_url: str, called: set[str]) -> None:
    host, bot_server = await edge(), await edge()
    room = await host.create_room("connect4")
    async with ConnectChannel(edge_url, called=called) as channel:
        bots = bots_pb2_grpc.BotServiceStub(channel)
        serving = bots.ServeBotRequests(bots_pb2.ServeBotRequestsRequest(games=["connect4"]), metadata=bot_server.metadata())
        waiting = asyncio.create_task(first(serving))
        # The stream is open once the server has taken it; the request is queued for whoever serves.
        answer = await bots.RequestBot(bots_pb2.RequestBotRequest(room_code=room.code, level=2), metadata=host.metadata())
        assert answer.request_id
        served = await asyncio.wait_for(waiting, TIMEOUT_S)
        assert public_id(served.request.request_id) == answer.request_id  # the asker holds its digest
        assert served.request.room_code == room.code and served.request.level == 2
        serving.cancel()
        code, message, reason = await refusal(
            bots.RequestBot(bots_pb2.RequestBotRequest(room_code=room.code, level=7), metadata=host.metadata())
        )
        assert code is grpc.StatusCode.INVALID_ARGUMENT and reason and message


async def test_ratings_answer_the_same_over_both_transports(edge: Connect, native: Connect) -> None:
    over_edge, over_grpc = await edge("json"), await native()
    for name, request in (
        ("ListLeaderboards", T.ListLeaderboardsRequest()),
        ("GetLeaderboard", T.GetLeaderboardRequest(leaderboard="connect4", include_provisional=True)),
        ("GetRatings", T.GetRatingsRequest(player_id=over_grpc.player.player_id)),
        ("GetPersonalBests", T.GetPersonalBestsRequest(sheet="classic")),
    ):
        try:
            expected = await getattr(over_grpc.ratings, name)(request, metadata=over_grpc.metadata())
        except grpc.aio.AioRpcError as error:
            # A refusal must be the same refusal.
            got = await refusal(getattr(over_edge.ratings, name)(request, metadata=over_edge.metadata()))
            assert got == (error.code(), error.details(), reason_of(error)), name
            continue
        assert await getattr(over_edge.ratings, name)(request, metadata=over_edge.metadata()) == expected, name
    boards = await over_edge.ratings.ListLeaderboards(T.ListLeaderboardsRequest(), metadata=over_edge.metadata())
    assert "connect4" in [b.leaderboard for b in boards.leaderboards]


async def test_tournaments_over_the_edge(edge: Connect) -> None:
    organiser = await edge("json")
    players = [await edge() for _ in range(3)]
    tournament = await organiser.create_tournament(
        name="web cup", game="connect4", format=T.TOURNAMENT_FORMAT_SWISS, rounds=1, capacity=8
    )
    tid = tournament.tournament_id
    events: list[T.TournamentEvent] = []
    watching = asyncio.create_task(_collect_tournament(organiser, tid, events, until="round_started"))
    for player in players:
        await player.join_tournament(tid)
    await players[2].leave_tournament(tid)
    assert tid in [t.tournament_id for t in await organiser.list_tournaments()]
    got = await organiser.get_tournament(tid)
    assert {p.player_id for p in got.players} == {p.player.player_id for p in players[:2]}
    running = await organiser.start_tournament(tid)
    assert running.state == T.TOURNAMENT_STATE_RUNNING
    await asyncio.wait_for(watching, TIMEOUT_S)
    kinds = [e.WhichOneof("kind") for e in events]
    assert kinds.count("player_joined") == 3 and "player_left" in kinds and kinds[-1] == "round_started"
    round_one = await organiser.tournaments.GetRound(
        T.GetRoundRequest(tournament_id=tid, round=1), metadata=organiser.metadata(), timeout=10
    )
    assert round_one.round.number == 1 and len(round_one.round.games) == 1
    assert len((await organiser.standings(tid)).standings) == 2
    # Refused: a running tournament cannot be cancelled; a registering one can, by its organiser only.
    code, message, reason = await refusal(
        organiser.tournaments.CancelTournament(T.CancelTournamentRequest(tournament_id=tid), metadata=organiser.metadata())
    )
    assert code is grpc.StatusCode.FAILED_PRECONDITION and message and reason
    later = await organiser.create_tournament(name="later", game="connect4", format=T.TOURNAMENT_FORMAT_KNOCKOUT)
    code, _, reason = await refusal(
        players[0].tournaments.CancelTournament(
            T.CancelTournamentRequest(tournament_id=later.tournament_id), metadata=players[0].metadata()
        )
    )
    assert code is grpc.StatusCode.PERMISSION_DENIED and reason
    cancelled = await organiser.tournaments.CancelTournament(
        T.CancelTournamentRequest(tournament_id=later.tournament_id), metadata=organiser.metadata(), timeout=10
    )
    assert cancelled.tournament.state == T.TOURNAMENT_STATE_CANCELLED
    ended: list[T.TournamentEvent] = []
    await asyncio.wait_for(_collect_tournament(organiser, later.tournament_id, ended, until="cancelled"), TIMEOUT_S)
    assert ended[-1].WhichOneof("kind") == "cancelled"


async def _collect_tournament(
    client: TafelClient, tid: str, into: list[tournaments_pb2.TournamentEvent], *, until: str
) -> None:
    async for event in client.watch_tournament(tid):
        into.append(event)
        if event.WhichOneof("kind") == until:
            return


async def test_account_life_and_safety_over_the_edge(edge: Connect) -> None:
    """Block, mute, report, standing, a new password, the export and the erasure, over the edge."""
    first_name, second_name = f"web{secrets.token_hex(4)}", f"web{secrets.token_hex(4)}"
    alice, bob = await edge(guest=False), await edge("json", guest=False)
    await alice.register(first_name, "password-123")
    await bob.register(second_name, "password-123")
    assert (await alice.block(second_name)).username == second_name
    await alice.mute(second_name)
    listed = await alice.list_blocked()
    assert [p.username for p in listed.blocked] == [second_name] == [p.username for p in listed.muted]
    await alice.unblock(second_name)
    await alice.unmute(second_name)
    assert await bob.report(first_name, "spam", details="over the edge")
    standing = await alice.my_standing()
    assert list(standing.warnings) == [] and list(standing.sanctions) == []
    await alice.change_password("password-123", "password-456")
    exported = await alice.export_my_data()
    assert exported["account"]["username"] == first_name
    await alice.delete_account("password-456")
    with pytest.raises(Unauthenticated):
        await (await edge(guest=False)).sign_in(first_name, "password-456")


async def test_challenges_offers_and_the_event_stream_over_the_edge(edge: Connect) -> None:
    """A challenge made and declined, one taken, offers and an abort, the account's event stream."""
    first_name, second_name = f"web{secrets.token_hex(4)}", f"web{secrets.token_hex(4)}"
    alice, bob = await edge(guest=False), await edge("json", guest=False)
    await alice.register(first_name, "password-123")
    await bob.register(second_name, "password-123", display_name="Bob de Vries")
    assert (await bob.set_display_name("Bob van Dijk")).display_name == "Bob van Dijk"
    async with bob.event_stream() as events:
        declined = await alice.create_challenge("connect4", username=second_name)
        seen = await anext(aiter(events))
        assert seen.challenge.challenge_id == declined.challenge_id
        assert (await bob.list_challenges()).incoming[0].challenge_id == declined.challenge_id
        assert (await bob.get_challenge(declined.challenge_id)).challenge_id == declined.challenge_id
        await bob.decline_challenge(declined.challenge_id, "later")
    cancelled = await alice.create_challenge("connect4", open=True)
    assert cancelled.challenge_id in [c.challenge_id for c in await bob.list_open_challenges("connect4")]
    await alice.cancel_challenge(cancelled.challenge_id)
    taken = await alice.create_challenge("connect4", username=second_name, seat="first")
    game_id = (await bob.accept_challenge(taken.challenge_id)).game_id
    await alice.make_offer(game_id, "draw")
    await bob.answer_offer(game_id, "draw", False)
    assert (await alice.abort_game(game_id)).status.outcome.reason == "ABORTED"


async def registered(edge: Connect, codec: str = "proto") -> TafelClient:
    client = await edge(codec, guest=False)
    await client.register(f"web{secrets.token_hex(4)}", "password-123")
    return client


async def until(probe: Callable[[], Awaitable[Any]], timeout_s: float = TIMEOUT_S) -> Any:
    """Ask `probe()` until it answers something true."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not (answer := await probe()):
        assert asyncio.get_running_loop().time() < deadline, "waited in vain"
        await asyncio.sleep(0.2)
    return answer


async def test_directing_a_tournament_over_the_edge(edge: Connect, native: Connect) -> None:
    """Edited, a player banned, a result corrected, an announcement in the inbox, the tournament's
    chat, pause and resume, the next round by hand, the audit, an early end and the exports."""
    org, ann, bob, cas = (
        await registered(edge, "json"),
        await registered(edge),
        await registered(edge),
        await registered(edge),
    )
    made = await org.create_tournament(
        name="edge night", game="connect4", format=T.TOURNAMENT_FORMAT_SWISS, rounds=2, capacity=8, manual_rounds=True
    )
    tid = made.tournament_id
    for player in (ann, bob, cas):
        await player.join_tournament(tid)
    edited = await org.update_tournament(tid, name="edge night (Friday)", capacity=6)
    assert (edited.name, edited.capacity, edited.rounds) == ("edge night (Friday)", 6, 2)
    # A player may not edit it: the same status, message and reason as over native gRPC.
    update = T.UpdateTournamentRequest(tournament_id=tid, settings=T.CreateTournamentRequest(name="mine"))
    update.update_mask.paths.append("name")
    over_grpc = await native(guest=False)
    over_grpc.session = ann.session
    edge_refusal = await refusal(ann.tournaments.UpdateTournament(update, metadata=ann.metadata()))
    grpc_refusal = await refusal(over_grpc.tournaments.UpdateTournament(update, metadata=over_grpc.metadata()))
    assert edge_refusal == grpc_refusal and edge_refusal[0] is grpc.StatusCode.PERMISSION_DENIED
    assert edge_refusal[2] == "NOT_ORGANISER"
    await org.remove_player(tid, cas.player.player_id, ban=True, reason="two accounts")
    assert cas.player.player_id not in {p.player_id for p in (await org.get_tournament(tid)).players}

    await org.start_tournament(tid)
    first_round = await until(lambda: org.tournament_round(tid, 1))
    game = next(g for g in first_round.games if g.game_id)
    ranks = [1 if p.player_id == ann.player.player_id else 2 for p in game.players]
    corrected = await org.correct_result(tid, round_number=1, board=game.board, ranks=ranks, reason="a disputed flag")
    assert corrected.game.state == T.TOURNAMENT_GAME_STATE_CORRECTED
    top = (await bob.standings(tid)).standings[0]
    assert top.player.player_id == ann.player.player_id and top.points == 1
    games = await bob.tournament_games(tid, round_number=1)
    assert [(g.game_id, g.state) for g in games] == [(game.game_id, T.TOURNAMENT_GAME_STATE_CORRECTED)]

    assert await org.announce(tid, "Round 2 after the break.") == 2

    async def announced() -> list[notices_pb2.Notification]:
        notices = (await ann.list_notifications()).notifications
        return [n for n in notices if n.kind == notices_pb2.NOTIFICATION_KIND_ANNOUNCEMENT]

    (notice,) = await until(announced)
    assert notice.tournament_id == tid and notice.text == "Round 2 after the break."

    # The tournament's chat: a line said is listed, and watched (as history, then live).
    room = chat_channel("tournament", tid)
    said = await ann.send_chat(room, "good luck all")
    assert [m.message_id for m in (await bob.list_chat(room)).messages] == [said.message_id]
    async with bob.chat_stream(room) as chat:
        lines = aiter(chat)
        assert (await asyncio.wait_for(anext(lines), TIMEOUT_S)).message_id == said.message_id
        answer = await org.send_chat(room, "thank you")
        live = await asyncio.wait_for(anext(lines), TIMEOUT_S)
        assert (live.message_id, live.text) == (answer.message_id, "thank you")

    assert (await org.pause_tournament(tid)).paused
    assert not (await org.resume_tournament(tid)).paused
    assert (await org.start_next_round(tid)).round.number == 2
    actions = [e.action for e in await org.tournament_audit(tid)]
    for action in ("UpdateTournament", "RemovePlayer", "CorrectResult", "Announce", "StartNextRound"):
        assert action in actions, actions
    ended = await org.terminate_tournament(tid, "the hall closes")
    assert ended.state == T.TOURNAMENT_STATE_FINISHED and ended.terminated

    files = await bob.export_tournament(tid, format="csv")
    assert sorted(n.rsplit("-", 1)[-1] for n in files) == ["games.csv", "pairings.csv", "standings.csv"]
    standings_csv = next(v for k, v in files.items() if k.endswith("standings.csv")).decode()
    rows = list(csv.reader(io.StringIO(standings_csv)))
    assert len(rows) >= 3 and ann.player.username in standings_csv
    (exported,) = (await bob.export_tournament(tid, format="json", parts=["standings"])).values()
    assert ann.player.username in json.dumps(json.loads(exported))


async def test_an_arena_paused_by_a_player_and_ended_over_the_edge(edge: Connect) -> None:
    """The web edge's platform keeps the five-minute minimum: started, a player steps away, ended."""
    org, ann, bob = await registered(edge), await registered(edge, "json"), await registered(edge)
    arena = await org.create_tournament(
        name="edge arena", game="connect4", format=T.TOURNAMENT_FORMAT_ARENA, arena_duration=duration(300)
    )
    tid = arena.tournament_id
    for player in (ann, bob):
        await player.join_tournament(tid)
    assert (await org.start_tournament(tid)).HasField("ends_at")
    with pytest.raises(IllegalMove) as refused:
        await org.pause_arena_play(tid)  # not a player of it
    assert refused.value.reason == "NOT_IN_TOURNAMENT"
    await ann.pause_arena_play(tid, paused=True)

    async def ann_paused() -> bool:
        rows = (await org.standings(tid)).standings
        return any(r.player.player_id == ann.player.player_id and r.paused for r in rows)

    await until(ann_paused)
    ended = await org.terminate_tournament(tid, "lunch is over")
    assert ended.state == T.TOURNAMENT_STATE_FINISHED and ended.terminated


async def test_searches_following_profiles_and_settings_over_the_edge(edge: Connect) -> None:
    ann, ben = await registered(edge), await registered(edge, "json")
    updates = ann.find_match_updates("connect4", days_per_move=7)
    try:
        queued = await anext(updates)
        assert queued.WhichOneof("status") == "queued", queued
    finally:
        await updates.aclose()  # type: ignore[attr-defined]
    (waiting,) = await until(ann.list_my_searches)
    assert waiting.ticket_id == queued.queued.ticket_id and waiting.time_control.days_per_move == 7
    assert (await ann.cancel_search("connect4")).cancelled
    assert await ann.list_my_searches() == []

    followed = await ann.follow(ben.player.username)
    assert followed.player.player_id == ben.player.player_id
    assert [f.player.username for f in await ann.list_following()] == [ben.player.username]
    profile = await ben.get_profile(ann.player.username)
    assert profile.player.player_id == ann.player.player_id and profile.follows_you and not profile.followed_by_you
    await ann.unfollow(ben.player.username)
    assert await ann.list_following() == []
    assert (await ann.get_profile(ben.player.username)).followers == 0

    assert (await ann.get_settings()).chat_enabled
    changed = await ann.update_settings(chat_enabled=False, challenge_policy=social_pb2.CHALLENGE_POLICY_FOLLOWED)
    assert not changed.chat_enabled and changed.challenge_policy == social_pb2.CHALLENGE_POLICY_FOLLOWED
    assert await ann.get_settings() == changed


async def test_notices_email_and_vacations_over_the_edge(edge: Connect) -> None:
    ann, ben = await registered(edge, "json"), await registered(edge)
    made = await ann.create_challenge("connect4", username=ben.player.username, days_per_move=2)

    async def challenged() -> list[notices_pb2.Notification]:
        notices = (await ben.list_notifications(unread_only=True)).notifications
        return [n for n in notices if n.kind == notices_pb2.NOTIFICATION_KIND_CHALLENGE_RECEIVED]

    (notice,) = await until(challenged)
    assert notice.challenge_id == made.challenge_id and notice.player.username == ann.player.username
    assert await ben.mark_notifications_read(notice.notification_id) == 0
    assert (await ben.list_notifications()).notifications[0].read
    assert await ben.clear_notifications(all=True) == 0
    assert not (await ben.list_notifications()).notifications

    settings = await ben.update_notification_settings(
        inbox={"opponent_moved": False}, quiet_hours=(22 * 60, 7 * 60), time_zone="Europe/Amsterdam"
    )
    assert await ben.notification_settings() == settings
    by_kind = {p.kind: p for p in settings.preferences}
    assert not by_kind[notices_pb2.NOTIFICATION_KIND_OPPONENT_MOVED].inbox and settings.time_zone == "Europe/Amsterdam"

    # No SMTP relay here: the confirmation mail goes to the log; the address waits for it.
    mailbox = f"{ben.player.username}@example.org"
    pending = await ben.set_email(mailbox, language="nl")
    assert not pending.confirmed and mailbox in (pending.address, pending.pending_address)
    now = await ben.get_email()
    assert not now.confirmed and mailbox in (now.address, now.pending_address)
    for call in (ben.confirm_email, ben.unsubscribe):
        with pytest.raises(NotFound) as refused:
            await call("not-a-token")
        assert refused.value.reason == "BAD_EMAIL_TOKEN"

    away = await ben.start_vacation(hours=24)
    assert away.active and (await ben.vacation()).ends_at == away.ends_at
    assert not (await ben.end_vacation()).active
    assert not (await ben.vacation()).active


async def test_every_public_method_was_called_over_the_edge(called: set[str]) -> None:
    """Run last in this module: the calls above cover the whole public API but Play (native only)."""
    public = {
        f"/{service.full_name}/{method.name}"
        for module in (play_pb2, bots_pb2, tournaments_pb2, safety_pb2, challenges_pb2, social_pb2, notices_pb2)
        for service in module.DESCRIPTOR.services_by_name.values()
        for method in service.methods
        if not method.client_streaming
    }
    assert public - called == set()
