"""End to end through real gateway processes: two players on two different gateways play Connect
Four to the end while a spectator watches; a cut connection resumes from its last event id; records
are kept; every refusal has its status code — on unary calls and on the Play stream."""

from __future__ import annotations

import asyncio

import grpc
from tafel.play.v1 import play_pb2

from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Client, PlayStream, Seating, c4_move, failure, new_id

# Seat 0 plays column 0, seat 1 column 1: seat 0 has four in a row on its fourth move (version 7).
COLUMNS = [0, 1, 0, 1, 0, 1, 0]


async def collect(call: grpc.aio.UnaryStreamCall, into: list[play_pb2.WatchGameResponse]) -> None:  # type: ignore[type-arg]
    async for response in call:
        into.append(response)


async def wait_until(predicate, timeout_s: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


def ids(events: list) -> list[str]:  # type: ignore[type-arg]
    return [e.event.event_id for e in events]


async def test_two_players_on_two_gateways_play_to_the_end_and_a_spectator_sees_everything(
    gw_system: GatewaySystem, seats: Seating, clients: list[Client]
) -> None:
    a, b, spectator = clients
    assert a.address != b.address
    game_id = await seats.start([a.player, b.player])

    watched: list[play_pb2.WatchGameResponse] = []
    spectating = asyncio.create_task(
        collect(spectator.games.WatchGame(play_pb2.WatchGameRequest(game_id=game_id), metadata=spectator.md), watched)
    )
    # A plays over the Play stream; B over unary calls and watches with WatchGame.
    stream = PlayStream(a)
    ack = await stream.request(watch=play_pb2.WatchGameRequest(game_id=game_id))
    assert ack.WhichOneof("kind") == "watching" and ack.watching.seat == 0
    assert ack.watching.summary.status.to_act == [0]
    assert ack.watching.summary.HasField("turn_deadline")
    b_events: list[play_pb2.WatchGameResponse] = []
    b_watching = asyncio.create_task(
        collect(b.games.WatchGame(play_pb2.WatchGameRequest(game_id=game_id), metadata=b.md), b_events)
    )

    for version, column in enumerate(COLUMNS):
        if version % 2 == 0:
            # A moves only once it has seen B's last move arrive through gateway 0 (version 0 is
            # in the watch's view: a watch with no id sends only later events: the contract's watching rule).
            await stream.wait_for(lambda v=version: v == 0 or any(e.event.version == v for e in stream.events))
            answer = await stream.request(
                submit_move=play_pb2.SubmitMoveRequest(
                    game_id=game_id, expected_version=version, request_id=new_id(), move=c4_move(column)
                )
            )
            assert answer.WhichOneof("kind") == "move_accepted", answer
            assert answer.move_accepted.version == version + 1
        else:
            await wait_until(lambda v=version: any(e.event.version == v for e in b_events))
            response = await b.move(game_id, version, column)
            assert response.version == version + 1 and response.HasField("turn_deadline")

    await asyncio.wait_for(asyncio.gather(spectating, b_watching), 10)  # both streams end with the game
    await stream.wait_for(lambda: stream.events and stream.events[-1].event.WhichOneof("kind") == "ended")

    everything = await seats.event_ids(game_id)
    assert everything[0] == "0-1" and everything[-1] == "7-2"
    assert ids(watched) == everything  # in order, nothing missing, nothing twice
    assert ids(b_events) == everything
    assert ids(stream.events) == everything[1:]  # the view stood for 0-1
    ended = watched[-1].event.ended.outcome
    assert list(ended.winners) == [0] and ended.reason == "FOUR_IN_A_ROW"
    assert not watched[-1].HasField("turn_deadline")
    assert all(e.game_id == game_id for e in stream.events)
    await stream.close()

    # A move after the end.
    code, reason = await failure(b.move(game_id, 7, 3))
    assert code == grpc.StatusCode.FAILED_PRECONDITION, reason

    # The record, from either gateway.
    for client in (a, b):
        record = (
            await client.games.GetGameRecord(play_pb2.GetGameRecordRequest(game_id=game_id), metadata=client.md)
        ).record
        assert [p.player.player_id for p in record.players] == [a.player.player_id, b.player.player_id]
        assert [action.move.connect4.column for action in record.actions] == COLUMNS
        assert [action.seat for action in record.actions] == [0, 1, 0, 1, 0, 1, 0]
        assert record.outcome.reason == "FOUR_IN_A_ROW" and list(record.outcome.winners) == [0]
        assert record.ended_at.ToMilliseconds() >= record.started_at.ToMilliseconds() > 0
        assert record.options.WhichOneof("game") == "connect4"
        assert record.time_control.per_move.seconds == 60
    listed = await b.games.ListGameRecords(
        play_pb2.ListGameRecordsRequest(player_id=a.player.player_id), metadata=b.md
    )
    assert [r.game_id for r in listed.records] == [game_id]
    mine = await a.games.ListMyGames(play_pb2.ListMyGamesRequest(), metadata=a.md)
    assert [g.game_id for g in mine.games] == [game_id] and mine.games[0].status.over
    assert not mine.games[0].HasField("turn_deadline")
    live = await spectator.games.ListLiveGames(play_pb2.ListLiveGamesRequest(page_size=100), metadata=spectator.md)
    assert game_id not in [g.game_id for g in live.games]


async def test_a_cut_connection_resumes_from_its_last_event_id(
    gw_system: GatewaySystem, seats: Seating, clients: list[Client]
) -> None:
    a, b, _ = clients
    game_id = await seats.start([a.player, b.player])
    received: list[str] = []

    first = PlayStream(a)
    # "0-0": the whole history on the Play stream (no id: only events after the view).
    await first.request(watch=play_pb2.WatchGameRequest(game_id=game_id, after_event_id="0-0"))
    answer = await first.request(
        submit_move=play_pb2.SubmitMoveRequest(game_id=game_id, expected_version=0, request_id=new_id(), move=c4_move(0))
    )
    assert answer.move_accepted.version == 1
    await first.wait_for(lambda: len(first.events) == 2)
    received += ids(first.events)
    last = received[-1]
    await first.client.close()  # the connection is cut
    await first.close()

    await b.move(game_id, 1, 6)  # ... a move A is not there to see; then A comes back on the other gateway
    a_again = Client(b.address)
    a_again.session = a.session
    second = PlayStream(a_again)
    ack = await second.request(watch=play_pb2.WatchGameRequest(game_id=game_id, after_event_id=last))
    assert ack.watching.summary.status.version == 2 and ack.watching.last_event_id == "2-1"
    await second.wait_for(lambda: len(second.events) == 1)
    answer = await second.request(
        submit_move=play_pb2.SubmitMoveRequest(game_id=game_id, expected_version=2, request_id=new_id(), move=c4_move(0))
    )
    assert answer.move_accepted.version == 3
    await second.wait_for(lambda: len(second.events) == 2)
    received += ids(second.events)
    assert received == await seats.event_ids(game_id) == ["0-1", "1-1", "2-1", "3-1"]  # nothing missed or twice

    # The unary watch resumes the same way.
    resumed: list[play_pb2.WatchGameResponse] = []
    call = b.games.WatchGame(play_pb2.WatchGameRequest(game_id=game_id, after_event_id="1-1"), metadata=b.md)
    task = asyncio.create_task(collect(call, resumed))
    await wait_until(lambda: len(resumed) == 2)
    assert ids(resumed) == ["2-1", "3-1"]
    assert resumed[-1].HasField("turn_deadline")
    call.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await second.close()
    await a_again.close()


async def test_refusals_on_unary_calls(gw_system: GatewaySystem, seats: Seating, clients: list[Client]) -> None:
    a, b, spectator = clients
    game_id = await seats.start([a.player, b.player])

    # Not your seat / not a player.
    code, reason = await failure(a.move(game_id, 0, 3, seat=1))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT")
    code, reason = await failure(spectator.move(game_id, 0, 3))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_A_PLAYER")
    # Not your turn is the rules' call.
    code, _ = await failure(b.move(game_id, 0, 3))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    # Bad or missing token.
    bad = (("authorization", "Bearer v1.eyJwIjoieCJ9.AAAA"),)
    request = play_pb2.SubmitMoveRequest(game_id=game_id, expected_version=0, request_id=new_id(), move=c4_move(3))
    code, reason = await failure(a.games.SubmitMove(request, metadata=bad))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")
    code, reason = await failure(a.games.SubmitMove(request))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")
    code, _ = await failure(a.games.GetGame(play_pb2.GetGameRequest(game_id=game_id), metadata=bad))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    # Garbage.
    code, reason = await failure(a.move("not a game id!", 0, 3))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_GAME_ID")
    code, reason = await failure(a.move(game_id, 0, 3, request_id="x" * 65))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST_ID")
    # A column the board lacks, by any amount: FAILED_PRECONDITION in every game (the contract's out-of-range rule;
    # was INVALID_ARGUMENT past column 1000).
    code, reason = await failure(a.move(game_id, 0, 1_000_000))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "COLUMN_OUT_OF_RANGE")
    code, reason = await failure(
        a.games.SubmitMove(play_pb2.SubmitMoveRequest(game_id=game_id, request_id=new_id()), metadata=a.md)
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "MOVE_MISSING")
    code, _ = await failure(a.move(game_id, 0, 3, request_id="x" * (2 << 20)))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED  # over the server's message size limit
    code, reason = await failure(a.move("nosuchgame", 0, 3))
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND")
    code, _ = await failure(
        a.games.WatchGame(play_pb2.WatchGameRequest(game_id=game_id, after_event_id="x"), metadata=a.md).read()
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, _ = await failure(a.games.ListLiveGames(play_pb2.ListLiveGamesRequest(page_token="garbage!"), metadata=a.md))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, _ = await failure(a.games.GetGameRecord(play_pb2.GetGameRecordRequest(game_id=game_id), metadata=a.md))
    assert code == grpc.StatusCode.NOT_FOUND  # still running: no record yet

    # A retried move is applied once and answered the same, through either gateway.
    first = await a.move(game_id, 0, 3, request_id="same-id")
    a_elsewhere = Client(b.address)
    a_elsewhere.session = a.session
    again = await a_elsewhere.move(game_id, 0, 3, request_id="same-id")
    assert again.version == first.version == 1 and list(again.events) == list(first.events)
    assert await seats.event_ids(game_id) == ["0-1", "1-1"]
    # The opponent may reuse the same request id for their own move: ids are per seat.
    assert (await b.move(game_id, 1, 4, request_id="same-id")).version == 2
    # A stale version.
    code, reason = await failure(a.move(game_id, 1, 3))
    assert code == grpc.StatusCode.ABORTED
    view = await spectator.get(game_id)
    assert not view.HasField("seat") and view.summary.status.version == 2

    # Resign ends it; then everything is FAILED_PRECONDITION.
    resigned = await b.games.Resign(play_pb2.ResignRequest(game_id=game_id, request_id=new_id()), metadata=b.md)
    assert resigned.status.over and list(resigned.status.outcome.winners) == [0]
    code, _ = await failure(a.move(game_id, resigned.version, 3))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    record = (await a.games.GetGameRecord(play_pb2.GetGameRecordRequest(game_id=game_id), metadata=a.md)).record
    assert record.actions[-1].resigned and record.actions[-1].seat == 1
    await a_elsewhere.close()


async def test_refusals_on_the_play_stream(gw_system: GatewaySystem, seats: Seating, clients: list[Client]) -> None:
    a, b, spectator = clients
    game_id = await seats.start([a.player, b.player])
    stream = PlayStream(a)

    def move(version: int, column: int, request_id: str | None = None, **extra: object) -> dict[str, object]:
        return {
            "submit_move": play_pb2.SubmitMoveRequest(
                game_id=game_id, expected_version=version, request_id=request_id or new_id(),
                move=c4_move(column), **extra,  # type: ignore[arg-type]
            )
        }

    pong = await stream.request(ping=play_pb2.Ping(nonce=7))
    assert pong.pong.nonce == 7
    refusal = (await stream.request(**move(0, 3, seat=1))).refusal
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.PERMISSION_DENIED.value[0], "NOT_YOUR_SEAT")
    refusal = (await stream.request(**move(0, 3, request_id="bad id"))).refusal
    assert refusal.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    refusal = (await stream.request()).refusal
    assert refusal.reason == "ACTION_MISSING"

    # A retried move (same request id, twice in flight at once) is applied once.
    first, second = await asyncio.gather(
        stream.request(**move(0, 3, request_id="dup")), stream.request(**move(0, 3, request_id="dup"))
    )
    accepted = [r for r in (first, second) if r.WhichOneof("kind") == "move_accepted"]
    assert accepted and all(r.move_accepted.version == 1 for r in accepted)
    for r in (first, second):
        if r.WhichOneof("kind") == "refusal":  # the loser of the race sees the version moved on
            assert r.refusal.code == grpc.StatusCode.ABORTED.value[0] and r.refusal.current_version == 1
    replay = await stream.request(**move(0, 3, request_id="dup"))
    assert replay.move_accepted.version == 1
    assert await seats.event_ids(game_id) == ["0-1", "1-1"]
    refusal = (await stream.request(**move(0, 2))).refusal
    assert refusal.code == grpc.StatusCode.ABORTED.value[0] and refusal.current_version == 1

    # Watching a game that does not exist; a spectator's watch on the stream works.
    refusal = (await stream.request(watch=play_pb2.WatchGameRequest(game_id="nope"))).refusal
    assert refusal.code == grpc.StatusCode.NOT_FOUND.value[0]
    watcher = PlayStream(spectator)
    ack = await watcher.request(watch=play_pb2.WatchGameRequest(game_id=game_id, after_event_id="0-1"))
    assert not ack.watching.HasField("seat")
    await watcher.wait_for(lambda: len(watcher.events) == 1)
    stop = await watcher.request(stop_watching=play_pb2.StopWatching(game_id=game_id))
    assert stop.watching.summary.game_id == game_id
    await b.move(game_id, 1, 4)

    # Resign over the stream, then a move after the end.
    resigned = await stream.request(resign=play_pb2.ResignRequest(game_id=game_id, request_id=new_id()))
    assert resigned.resigned.status.over and list(resigned.resigned.status.outcome.winners) == [1]
    refusal = (await stream.request(**move(3, 0))).refusal
    assert refusal.code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    await asyncio.sleep(0.2)
    assert len(watcher.events) == 1  # stopped watching: nothing more arrived
    await watcher.close()
    await stream.close()

    # A stream with a bad token is refused at once.
    call = a.games.Play(metadata=(("authorization", "Bearer nonsense"),), timeout=10)
    code, _ = await failure(call.read())
    assert code == grpc.StatusCode.UNAUTHENTICATED


async def test_a_batching_play_stream_gets_its_own_moves_events_with_the_answer_in_one_message(
    gw_system: GatewaySystem, seats: Seating, clients: list[Client]
) -> None:
    a, b, _ = clients
    game_id = await seats.start([a.player, b.player])
    batching, plain = PlayStream(a), PlayStream(b)
    answer = await batching.request(set_options=play_pb2.PlayOptions(batch_responses=True))
    assert answer.options_set.batch_responses
    for stream in (batching, plain):
        await stream.request(watch=play_pb2.WatchGameRequest(game_id=game_id, after_event_id="0-0"))
    await batching.wait_for(lambda: ids(batching.events) == ["0-1"])

    def move(version: int, column: int) -> dict[str, object]:
        submit = play_pb2.SubmitMoveRequest(
            game_id=game_id, expected_version=version, request_id=new_id(), move=c4_move(column)
        )
        return {"submit_move": submit}

    correlation = await batching.send(**move(0, 3))
    await batching.wait_for(lambda: correlation in batching.answers)
    carrying = [m for m in batching.messages if m.WhichOneof("kind") == "batch"
                and any(r.correlation_id == correlation for r in m.batch.responses)]
    assert len(carrying) == 1  # the answer came in a batch ...
    kinds = [r.WhichOneof("kind") for r in carrying[0].batch.responses]
    assert kinds[-2:] == ["event", "move_accepted"]  # ... right after its own event
    assert carrying[0].batch.responses[-2].event.event.event_id == "1-1"

    await b.move(game_id, 1, 4)  # the opponent's move arrives on its own
    await batching.wait_for(lambda: ids(batching.events) == ["0-1", "1-1", "2-1"])
    stale = await batching.request(**move(0, 2))  # refused: nothing parked is lost
    assert stale.refusal.code == grpc.StatusCode.ABORTED.value[0]
    correlation = await batching.send(**move(2, 3))
    await batching.wait_for(lambda: correlation in batching.answers and len(batching.events) == 4)
    assert ids(batching.events) == ["0-1", "1-1", "2-1", "3-1"]  # in order, none twice

    await plain.wait_for(lambda: len(plain.events) == 4)
    assert ids(plain.events) == ["0-1", "1-1", "2-1", "3-1"]
    assert all(m.WhichOneof("kind") != "batch" for m in plain.messages)  # never asked for batches
    for stream in (batching, plain):
        await stream.close()


def find(seconds_per_move: int, game: str = "connect4") -> dict[str, object]:
    """A find_match request in a bucket of its own (the time control makes the bucket)."""
    request = play_pb2.FindMatchRequest(game=game)
    request.time_control.per_move.FromSeconds(seconds_per_move)
    return {"find_match": request}


async def test_matchmaking_on_the_play_stream_across_gateways(
    gw_system: GatewaySystem, seats: Seating, clients: list[Client]
) -> None:
    a, b, c = clients  # a on gateway 0, b and c on gateway 1
    streams = [PlayStream(a), PlayStream(b)]
    searches = [await stream.send(**find(77)) for stream in streams]

    def found(stream: PlayStream, correlation: int) -> list[play_pb2.PlayResponse]:
        return [r for r in stream.responses if r.correlation_id == correlation and r.HasField("match_update")]

    for stream, correlation in zip(streams, searches, strict=True):
        await stream.wait_for(lambda s=stream, k=correlation: any(  # type: ignore[misc]
            u.match_update.HasField("matched") for u in found(s, k)
        ))
        updates = found(stream, correlation)
        assert updates[0].match_update.HasField("queued") and updates[-1].match_update.HasField("matched")
    matches = [found(s, k)[-1].match_update.matched for s, k in zip(streams, searches, strict=True)]
    assert matches[0].game_id == matches[1].game_id and {m.seat for m in matches} == {0, 1}
    assert {p.player.player_id for p in matches[0].players} == {a.player.player_id, b.player.player_id}
    ack = await streams[0].request(watch=play_pb2.WatchGameRequest(game_id=matches[0].game_id))
    assert ack.watching.summary.game_id == matches[0].game_id  # the game exists and can be played

    # stop_finding withdraws the ticket: the same search is accepted again at once.
    lone = PlayStream(c)
    first = await lone.send(**find(78))
    await lone.wait_for(lambda: bool(found(lone, first)))
    stopped = await lone.request(stop_finding=play_pb2.StopFinding(find_correlation_id=first))
    assert stopped.HasField("match_update")
    again = await lone.send(**find(78))
    await lone.wait_for(lambda: bool(found(lone, again)))
    assert found(lone, again)[0].match_update.HasField("queued")
    await lone.close()  # ... and so does the end of the stream, once its gateway has noticed
    fresh = PlayStream(c)
    # The gateway withdraws the closed stream's ticket a moment later (a fixed 0.3 s pause was
    # outlasted on a busy machine): until then the search is ALREADY_QUEUED; within 10 s it is not.
    deadline = asyncio.get_running_loop().time() + 10
    for _ in range(200):
        third = await fresh.send(**find(78))
        await fresh.wait_for(lambda k=third: any(r.correlation_id == k for r in fresh.responses))  # type: ignore[misc]
        if found(fresh, third) or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.05)
    assert found(fresh, third) and found(fresh, third)[0].match_update.HasField("queued")

    # A second search in the same bucket while one waits takes its ticket over (the first is told);
    # an unknown game is refused.
    ticket = found(fresh, third)[0].match_update.queued.ticket_id
    fourth = await fresh.send(**find(78))
    def refused(k: int) -> list[play_pb2.PlayResponse]:
        return [r for r in fresh.responses if r.correlation_id == k and r.HasField("refusal")]

    await fresh.wait_for(lambda: bool(found(fresh, fourth)) and bool(refused(third)))
    assert found(fresh, fourth)[0].match_update.queued.ticket_id == ticket
    taken = refused(third)[0].refusal
    assert (taken.code, taken.reason) == (grpc.StatusCode.ABORTED.value[0], "SEARCH_TAKEN_OVER")
    refused = await fresh.request(**find(78, game="chess"))
    assert refused.refusal.code in (grpc.StatusCode.INVALID_ARGUMENT.value[0], grpc.StatusCode.NOT_FOUND.value[0])
    for stream in (*streams, fresh):
        await stream.close()


async def test_accounts_and_listing(gw_system: GatewaySystem, seats: Seating, clients: list[Client]) -> None:
    a, b, spectator = clients
    user = new_id("u")[:20]
    session = (await a.accounts.Register(play_pb2.RegisterRequest(username=user, password="correct horse"))).session
    assert session.player.username == user and not session.player.guest
    code, reason = await failure(b.accounts.Register(play_pb2.RegisterRequest(username=user, password="another one")))
    assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "USERNAME_TAKEN")
    code, _ = await failure(b.accounts.Register(play_pb2.RegisterRequest(username="x", password="correct horse")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, _ = await failure(b.accounts.SignIn(play_pb2.SignInRequest(username=user, password="wrong horse")))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    signed_in = (await b.accounts.SignIn(play_pb2.SignInRequest(username=user, password="correct horse"))).session
    assert signed_in.player.player_id == session.player.player_id
    me = await b.accounts.GetMe(play_pb2.GetMeRequest(), metadata=(("authorization", f"Bearer {signed_in.token}"),))
    assert me.player.player_id == session.player.player_id
    assert (await a.accounts.GetMe(play_pb2.GetMeRequest(), metadata=a.md)).player.guest

    # Live games page by page: each of ours exactly once.
    ours: list[str] = []
    for _ in range(3):
        ours.append(await seats.start([a.player, b.player]))
        # Creation times are kept in milliseconds and games of one millisecond list in id order:
        # distinct times make "newest first" one order (two starts once fell in the same one).
        await asyncio.sleep(0.002)
    seen: list[str] = []
    token = ""
    while True:
        page = await spectator.games.ListLiveGames(
            play_pb2.ListLiveGamesRequest(game="connect4", page_size=2, page_token=token), metadata=spectator.md
        )
        assert len(page.games) <= 2
        seen += [g.game_id for g in page.games]
        token = page.next_page_token
        if not token:
            break
    assert len(seen) == len(set(seen)) and set(ours) <= set(seen)
    mine = await a.games.ListMyGames(play_pb2.ListMyGamesRequest(page_size=2), metadata=a.md)
    assert [g.game_id for g in mine.games] == ours[::-1][:2] and mine.next_page_token
    rest = await a.games.ListMyGames(play_pb2.ListMyGamesRequest(page_token=mine.next_page_token), metadata=a.md)
    assert [g.game_id for g in rest.games] == ours[:1]
    summary = mine.games[0]
    assert [p.player.player_id for p in summary.players] == [a.player.player_id, b.player.player_id]
    assert summary.HasField("turn_deadline") and summary.time_control.per_move.seconds == 60


async def test_the_rules_stream_batches_concurrent_actions(seats: Seating, clients: list[Client]) -> None:
    """Actions sent together leave in one batched stream message; every one gets its own answer
    (an applied move, a retry's first answer, a version conflict), matched by correlation id."""
    from tafel.connect4.v1 import connect4_pb2
    from tafel.games.v1 import games_pb2
    from tafel.rules.v1 import rules_pb2

    from kit.errors import Refused

    players = [clients[0].player, clients[1].player]
    game_ids = [await seats.start(players) for _ in range(12)]

    def request(game_id: str, version: int, rid: str) -> rules_pb2.ApplyMoveRequest:
        move = games_pb2.GameMove(connect4=connect4_pb2.Move(column=3))
        return rules_pb2.ApplyMoveRequest(
            game_id=game_id, seat=0, expected_version=version, request_id=rid, move=move
        )

    router = seats.router
    first = await asyncio.gather(*(router.apply("connect4", request(g, 0, "b1")) for g in game_ids))
    assert [answer.version for answer in first] == [1] * len(game_ids)
    # Again at once: the same request ids get the first answers; a stale version is refused.
    again = router.apply("connect4", request(game_ids[0], 0, "b1"))
    stale = router.apply("connect4", request(game_ids[1], 0, "b2"))
    results = await asyncio.gather(again, stale, return_exceptions=True)
    assert isinstance(results[0], rules_pb2.ApplyMoveResponse) and results[0].version == 1
    assert isinstance(results[1], Refused) and results[1].code == grpc.StatusCode.ABORTED
