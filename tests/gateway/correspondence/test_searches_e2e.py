"""Correspondence searches that outlive their stream, through the public API: a real Redis, two
real gateways (tickets' leases short: 2 s) and a real Connect Four rules service, on a moved clock
(kit/timesource.py) for the week a search may wait.

A 3-day search whose FindMatch call is dropped stays queued past its lease and is listed; a player on
the other gateway searching with the same settings is paired with it; both get GameStarted (origin
"matchmaking") on their event streams and the first mover YOUR_TURN. CancelSearch withdraws (and is
idempotent, and answers a paired search's game); a resent search takes a parked one over;
StopFinding on the Play stream withdraws one and the Play stream's end parks it; a real-time
search still leaves the queue with its stream; a parked search expires after a week."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2
from tafel.play.v1 import notices_pb2, play_pb2

from kit.timesource import write_offset
from tests.gateway.correspondence.test_correspondence_e2e import DAY, Platform, eventually, lobby, ms, notices
from tests.gateway.harness import spawn, spawn_gateway
from tests.gateway.social.streams import Events
from tests.gateway.standing.helpers import Person, register
from tests.keyspace import emptied
from tools.redis_server import free_port

WEEK = 7 * DAY


class SearchPlatform(Platform):
    """The correspondence platform with a short ticket lease: a parked search outlives it."""

    def start(self) -> None:
        rules = spawn(
            "connect4-rules", "services.connect4", {"REDIS_URL": self.url, "TAFEL_PORT": str(free_port()), **self.env}
        )
        gateways = [
            spawn_gateway(self.url, {"connect4": rules.address}, name=f"gateway-{i}", TAFEL_MM_LEASE_S="2", **self.env)
            for i in range(2)
        ]
        self.procs = [rules, *gateways]


@pytest.fixture(scope="module")
def platform(redis_url: str) -> Iterator[SearchPlatform]:
    folder = tempfile.mkdtemp(prefix="tafel-searches-")
    made = SearchPlatform(emptied(redis_url, "correspondence searches"), str(Path(folder) / "offset"))
    write_offset(made.offset_file, 0)
    made.start()
    try:
        yield made
    finally:
        made.stop()


def days(n: int) -> play_pb2.TimeControl:
    return play_pb2.TimeControl(days_per_move=n)


def seconds(n: int) -> play_pb2.TimeControl:
    return play_pb2.TimeControl(per_move=duration_pb2.Duration(seconds=n))


async def queued(person: Person, control: play_pb2.TimeControl) -> tuple[grpc.aio.UnaryStreamCall, str]:
    """A FindMatch call that has queued (its ticket id); the caller drops or reads it."""
    call = lobby(person).FindMatch(play_pb2.FindMatchRequest(game="connect4", time_control=control), metadata=person.md)
    first = await call.read()
    assert first.WhichOneof("status") == "queued", first
    return call, first.queued.ticket_id


async def listed(person: Person) -> list[play_pb2.WaitingSearch]:
    answer = await lobby(person).ListMySearches(play_pb2.ListMySearchesRequest(), metadata=person.md, timeout=10)
    return list(answer.searches)


async def cancel(person: Person) -> play_pb2.CancelSearchResponse:
    answer: play_pb2.CancelSearchResponse = await lobby(person).CancelSearch(
        play_pb2.CancelSearchRequest(game="connect4"), metadata=person.md, timeout=10
    )
    return answer


async def stays_unpaired(call: grpc.aio.UnaryStreamCall, wait_s: float = 2.5) -> None:
    """The search gets only MatchQueued updates for `wait_s`."""
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(wait_s):
            while True:
                update = await call.read()
                assert update.WhichOneof("status") == "queued", "paired with a search that should have left"


@pytest.fixture
async def pair(platform: SearchPlatform) -> AsyncIterator[tuple[Person, Person]]:
    """Two players, one on each gateway."""
    a = await register(platform.address, "srcha")
    b = await register(platform.other_address, "srchb")
    yield a, b
    for person in (a, b):
        await cancel(person)
        await person.channel.close()


async def test_a_dropped_search_is_paired_later_and_both_players_told(
    platform: SearchPlatform, pair: tuple[Person, Person]
) -> None:
    a, b = pair
    events_a, events_b = await Events(a).started(), await Events(b).started()
    call, ticket = await queued(a, days(3))
    waiting = await listed(a)
    assert [(s.game, s.time_control.days_per_move, s.ticket_id) for s in waiting] == [("connect4", 3, ticket)]
    assert ms(waiting[0].expires_at) - ms(waiting[0].queued_at) == WEEK
    assert waiting[0].max_seats == 2 and waiting[0].options.WhichOneof("game") == "connect4"
    call.cancel()  # the page closed: the search stays
    await events_a.close()  # no stream of the player is open when the match comes
    await asyncio.sleep(3.0)  # past the ticket's 2 s lease
    assert [s.ticket_id for s in await listed(a)] == [ticket]

    search = lobby(b).FindMatch(play_pb2.FindMatchRequest(game="connect4", time_control=days(3)), metadata=b.md)
    async with asyncio.timeout(10):
        found = await search.read()
        while found.WhichOneof("status") == "queued":
            found = await search.read()
    assert found.WhichOneof("status") == "matched", found
    game_id = found.matched.game_id
    assert {p.player.player_id for p in found.matched.players} == {
        a.session.player.player_id,
        b.session.player.player_id,
    }

    await events_b.until(lambda: any(s.game_id == game_id for s in events_b.of("game_started")))
    started_b = next(s for s in events_b.of("game_started") if s.game_id == game_id)
    assert started_b.origin == "matchmaking"
    later_a = await Events(a, after=events_a.last_id or "0-0").started()  # a opens the app later: the start waits there
    await later_a.until(lambda: any(s.game_id == game_id for s in later_a.of("game_started")))
    assert next(s for s in later_a.of("game_started") if s.game_id == game_id).origin == "matchmaking"
    await later_a.close()
    await events_b.close()

    view = await a.games.GetGame(play_pb2.GetGameRequest(game_id=game_id), metadata=a.md, timeout=10)
    assert view.summary.time_control.days_per_move == 3
    mover = a if view.summary.players[0].player.player_id == a.session.player.player_id else b

    async def told() -> bool:
        return any(
            n.kind == notices_pb2.NOTIFICATION_KIND_YOUR_TURN and n.game_id == game_id for n in await notices(mover)
        )

    await eventually(told, "the first mover's YOUR_TURN")
    assert await listed(a) == []
    answer = await cancel(a)  # paired already: not undone, the game named
    assert not answer.cancelled and answer.game_id == game_id
    again = await cancel(a)
    assert not again.cancelled and again.game_id == ""


async def test_cancel_list_take_over_and_stop_finding(platform: SearchPlatform, pair: tuple[Person, Person]) -> None:
    a, b = pair
    call, ticket = await queued(a, days(5))
    call.cancel()
    await asyncio.sleep(0.3)
    # The same search sent again (through the other gateway) takes the waiting one over.
    moved = Person(grpc.aio.insecure_channel(platform.other_address), a.session)
    again, resumed = await queued(moved, days(5))
    assert resumed == ticket
    again.cancel()
    await asyncio.sleep(0.3)
    assert [s.ticket_id for s in await listed(a)] == [ticket]

    answer = await cancel(a)
    assert answer.cancelled and answer.game_id == ""
    assert await listed(a) == []
    assert not (await cancel(a)).cancelled  # idempotent

    # Withdrawn: a search in its bucket is not paired with it.
    other, _ = await queued(b, days(5))
    await stays_unpaired(other)
    other.cancel()

    # On the Play stream: StopFinding withdraws; the stream's end leaves it waiting.
    stream = a.games.Play(metadata=a.md)
    await stream.write(
        play_pb2.PlayRequest(
            correlation_id=1, find_match=play_pb2.FindMatchRequest(game="connect4", time_control=days(7))
        )
    )
    first = await stream.read()
    assert first.correlation_id == 1 and first.match_update.WhichOneof("status") == "queued", first
    assert [s.time_control.days_per_move for s in await listed(a)] == [7]
    await stream.write(play_pb2.PlayRequest(correlation_id=2, stop_finding=play_pb2.StopFinding(find_correlation_id=1)))
    while (answer_ := await stream.read()).correlation_id != 2:
        pass
    assert await listed(a) == []
    await stream.write(
        play_pb2.PlayRequest(
            correlation_id=3, find_match=play_pb2.FindMatchRequest(game="connect4", time_control=days(7))
        )
    )
    while (answer_ := await stream.read()).correlation_id != 3:
        pass
    assert answer_.match_update.WhichOneof("status") == "queued"
    await stream.done_writing()
    stream.cancel()
    await asyncio.sleep(3.0)  # past the lease
    assert [s.time_control.days_per_move for s in await listed(a)] == [7]
    assert (await cancel(a)).cancelled
    await moved.channel.close()


async def test_a_real_time_search_leaves_with_its_stream(platform: SearchPlatform, pair: tuple[Person, Person]) -> None:
    a, b = pair
    call, _ = await queued(a, seconds(30))
    assert await listed(a) == []  # only correspondence searches are listed
    call.cancel()
    await asyncio.sleep(0.5)
    other, _ = await queued(b, seconds(30))
    await stays_unpaired(other)
    other.cancel()
    assert not (await cancel(a)).cancelled


async def test_a_waiting_search_expires_after_a_week(platform: SearchPlatform, pair: tuple[Person, Person]) -> None:
    a, b = pair
    call, _ = await queued(a, days(1))
    call.cancel()
    await asyncio.sleep(0.3)
    (waiting,) = await listed(a)
    platform.advance_to(ms(waiting.expires_at) - 60_000)
    assert len(await listed(a)) == 1  # a minute before: still waiting
    platform.advance_to(ms(waiting.expires_at) + 1000)
    assert await listed(a) == []
    other, _ = await queued(b, days(1))
    await stays_unpaired(other)  # the expired ticket is not paired
    other.cancel()
    assert not (await cancel(a)).cancelled
