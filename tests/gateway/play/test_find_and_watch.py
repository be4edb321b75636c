"""FindMatchRequest.watch: a search on the Play stream that starts the game's watch when matched.

Through real gateway processes: the match and the watch's first answer leave in one message on a
batching stream (counted: the messages a game start costs each player, with and without the
option), the watch then behaves as any other (events after the view, in order; stop_watching ends
it; a resume from an event id is a normal watch), a stream that does not set it gets today's
updates, and LobbyService.FindMatch refuses it."""

from __future__ import annotations

import grpc
from tafel.play.v1 import play_pb2, play_pb2_grpc

from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Client, PlayStream, c4_move, failure, new_id


def search(seconds_per_move: int, *, watch: bool) -> dict[str, object]:
    """A find_match request in a bucket of its own (the time control makes the bucket)."""
    request = play_pb2.FindMatchRequest(game="connect4", request_id=new_id("f"), watch=watch)
    request.time_control.per_move.FromSeconds(seconds_per_move)
    return {"find_match": request}


async def batching(client: Client) -> PlayStream:
    stream = PlayStream(client)
    await stream.request(set_options=play_pb2.PlayOptions(batch_responses=True))
    return stream


def of(stream: PlayStream, correlation: int) -> list[play_pb2.PlayResponse]:
    return [r for r in stream.responses if r.correlation_id == correlation]


def ids(stream: PlayStream) -> list[str]:
    return [e.event.event_id for e in stream.events]


def messages_since(stream: PlayStream, first: int) -> list[play_pb2.PlayResponse]:
    return stream.messages[first:]


async def test_a_search_with_watch_answers_with_the_view_in_the_match_message(
    gw_system: GatewaySystem, clients: list[Client]
) -> None:
    a, b, _ = clients  # on gateway 0 and gateway 1
    streams = [await batching(a), await batching(b)]
    before = [len(s.messages) for s in streams]
    finds = [await s.send(**search(81, watch=True)) for s in streams]
    for stream, correlation in zip(streams, finds, strict=True):
        await stream.wait_for(
            lambda s=stream, k=correlation: any(  # type: ignore[misc]
                r.WhichOneof("kind") == "watching" for r in of(s, k)
            )
        )
    views: list[play_pb2.GetGameResponse] = []
    for stream, correlation, start in zip(streams, finds, before, strict=True):
        kinds = [r.WhichOneof("kind") for r in of(stream, correlation)]
        assert kinds == ["match_update", "match_update", "watching"]
        queued, found, watching = of(stream, correlation)
        assert queued.match_update.HasField("queued")
        assert found.match_update.matched.watch_started
        assert watching.watching.summary.game_id == found.match_update.matched.game_id
        assert watching.watching.HasField("seat") and watching.watching.seat == found.match_update.matched.seat
        # The count: one message in (the search), two out (MatchQueued; MatchFound + the view).
        received = messages_since(stream, start)
        assert len(received) == 2
        assert received[1].WhichOneof("kind") == "batch"
        assert [r.WhichOneof("kind") for r in received[1].batch.responses] == ["match_update", "watching"]
        views.append(watching.watching)
    game_id = views[0].summary.game_id
    assert views[1].summary.game_id == game_id
    assert views[0].last_event_id == "0-1"  # the view stands for the history: only later events follow
    assert not streams[0].events and not streams[1].events

    # Events after the view come on the watch the search started, in order, once.
    mover = 0 if views[0].seat == 0 else 1
    other = 1 - mover

    def move(version: int, column: int) -> dict[str, object]:
        submit = play_pb2.SubmitMoveRequest(
            game_id=game_id, expected_version=version, request_id=new_id(), move=c4_move(column)
        )
        return {"submit_move": submit}

    answer = await streams[mover].request(**move(0, 3))
    assert answer.move_accepted.version == 1
    await streams[other].wait_for(lambda: ids(streams[other]) == ["1-1"])
    assert list(streams[other].events[0].status.to_act) == [views[other].seat]
    answer = await streams[other].request(**move(1, 4))
    assert answer.move_accepted.version == 2
    await streams[mover].wait_for(lambda: ids(streams[mover]) == ["1-1", "2-1"])

    # stop_watching ends it like any watch: the next move is not delivered to that stream ...
    stopped = await streams[other].request(stop_watching=play_pb2.StopWatching(game_id=game_id))
    assert stopped.watching.summary.game_id == game_id
    seen = ids(streams[other])
    assert seen in (["1-1"], ["1-1", "2-1"])  # its own move's event, unless it lagged past the stop
    await streams[mover].request(**move(2, 3))
    await streams[mover].wait_for(lambda: ids(streams[mover]) == ["1-1", "2-1", "3-1"])
    ping = await streams[other].request(ping=play_pb2.Ping(nonce=7))
    assert ping.pong.nonce == 7 and ids(streams[other]) == seen
    # ... and a normal watch resumes after the last event it had: the rest, in order, once.
    resumed = await streams[other].request(watch=play_pb2.WatchGameRequest(game_id=game_id, after_event_id=seen[-1]))
    assert resumed.watching.summary.status.version == 3
    await streams[other].wait_for(lambda: ids(streams[other])[-1:] == ["3-1"])
    assert ids(streams[other]) == ["1-1", "2-1", "3-1"]
    for stream in streams:
        await stream.close()


async def test_a_search_without_watch_is_answered_as_before_and_a_plain_stream_gets_separate_messages(
    gw_system: GatewaySystem, clients: list[Client]
) -> None:
    a, b, _ = clients
    old, plain = await batching(a), PlayStream(b)  # `old` as a client that predates the option
    before = [len(s.messages) for s in (old, plain)]
    finds = [await old.send(**search(82, watch=False)), await plain.send(**search(82, watch=True))]
    await old.wait_for(lambda: any(r.match_update.HasField("matched") for r in of(old, finds[0])))
    await plain.wait_for(lambda: any(r.WhichOneof("kind") == "watching" for r in of(plain, finds[1])))

    updates = of(old, finds[0])
    assert [r.WhichOneof("kind") for r in updates] == ["match_update", "match_update"]
    matched = updates[-1].match_update.matched
    assert not matched.watch_started
    game_id = matched.game_id
    # Today's game start: one message in, two out until matched, then the watch's two.
    assert len(messages_since(old, before[0])) == 2
    watched = await old.request(watch=play_pb2.WatchGameRequest(game_id=game_id))
    assert watched.watching.summary.game_id == game_id
    assert len(messages_since(old, before[0])) == 3
    assert not old.events

    # Without batching the match and the view still come in that order, one message each.
    kinds = [r.WhichOneof("kind") for r in of(plain, finds[1])]
    assert kinds == ["match_update", "match_update", "watching"]
    assert [m.WhichOneof("kind") for m in messages_since(plain, before[1])] == kinds
    assert of(plain, finds[1])[1].match_update.matched.watch_started
    assert of(plain, finds[1])[2].watching.summary.game_id == game_id
    for stream in (old, plain):
        await stream.close()


async def test_lobby_find_match_refuses_watch(gw_system: GatewaySystem, clients: list[Client]) -> None:
    a = clients[0]
    request = play_pb2.FindMatchRequest(game="connect4", watch=True)
    lobby = play_pb2_grpc.LobbyServiceStub(a.channel)
    code, reason = await failure(lobby.FindMatch(request, metadata=a.md).read())
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "WATCH_NEEDS_PLAY_STREAM")
