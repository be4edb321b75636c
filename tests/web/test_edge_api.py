"""Every public RPC over the web edge (Connect, from Python: tools/connect_channel over httpx),
through the unchanged Python SDK and the generated stubs, against the real platform. Refused
calls carry the same status, message and ErrorInfo reason as over native gRPC; read-only calls
answer the same messages. The last test checks that no public method was left out."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from tafel.client import TafelClient
from tafel.connect4.v1 import connect4_pb2
from tafel.errors import IllegalMove, Unauthenticated
from tafel.play.v1 import bots_pb2, bots_pb2_grpc, challenges_pb2, play_pb2, safety_pb2, tournaments_pb2
from tafel.play.v1 import tournaments_pb2 as T

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


async def test_every_public_method_was_called_over_the_edge(called: set[str]) -> None:
    """Run last in this module: the calls above cover the whole public API but Play (native only)."""
    public = {
        f"/{service.full_name}/{method.name}"
        for module in (play_pb2, bots_pb2, tournaments_pb2, safety_pb2, challenges_pb2)
        for service in module.DESCRIPTOR.services_by_name.values()
        for method in service.methods
        if not method.client_streaming
    }
    assert public - called == set()
