"""The platform's actions beyond moves (rules.proto DrawAgreed, Abort, TakeBack), through the rules
service's gRPC API against a real Redis, in every game where they apply: Connect Four, Plus 4 and
a Colour Square duel. Each is applied once per request id, refused where it does not apply,
recorded in the game's action list, and re-arms the turn clock in its own write; a take-back
returns to exactly the position of its version (the views compare equal)."""

from __future__ import annotations

import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2
from tafel_rules.coloursquare.rules import RULES as COLOURSQUARE
from tafel_rules.connect4 import RULES as CONNECT4
from tafel_rules.game import Outcome
from tafel_rules.plus4 import RULES as PLUS4

from kit.redis.keys import clock_key, clocks_key, game_keys, game_shard
from services.coloursquare.codec import CODEC as COLOURSQUARE_CODEC
from services.connect4.codec import CODEC as CONNECT4_CODEC
from services.host.codec import GameEnvelope
from services.host.store import GameStore
from services.plus4.codec import CODEC as PLUS4_CODEC
from tests.services.rules_harness import Service, apply_request, new_id, refusal, rules_service

GAMES = {
    "connect4": (CONNECT4, CONNECT4_CODEC),
    "plus4": (PLUS4, PLUS4_CODEC),
    "coloursquare": (COLOURSQUARE, COLOURSQUARE_CODEC),
}
CLOCK = rules_pb2.TurnClock(per_move_ms=30_000, ttl_s=600)


@dataclass
class Table:
    """A game on the service, mirrored by the pure rules from the same seed."""

    service: Service
    rules: Any
    envelope: GameEnvelope[Any, Any, Any, Any, Any]
    game_id: str
    state: Any
    seats: int
    version: int = 0
    rng: random.Random = field(default_factory=lambda: random.Random(7))
    states: list[Any] = field(default_factory=list)  # the mirror's state at each version

    async def play(self, count: int) -> None:
        """`count` random legal moves, each checked against the mirror."""
        for _ in range(count):
            seat = self.rng.choice(sorted(self.rules.to_act(self.state)))
            moves = self.rules.legal_moves(self.state, seat)
            move = moves[self.rng.randrange(min(len(moves), 50))]
            self.state, _ = self.rules.apply_move(self.state, seat, move)
            request = apply_request(
                self.game_id, seat, self.version, move=self.envelope.move_to_union(move), turn_clock=CLOCK
            )
            response = await self.service.stub.ApplyMove(request)
            self.version += 1
            assert response.version == self.version and not response.status.over
            self.states.append(self.state)

    async def views(self) -> tuple[list[bytes], list[int]]:
        """Every seat's view and the spectator's, encoded, and whom the game waits on."""
        seen = []
        for seat in [*range(self.seats), None]:
            request = rules_pb2.GetViewRequest(game_id=self.game_id)
            if seat is not None:
                request.seat = seat
            response = await self.service.stub.GetView(request)
            seen.append(response.view.SerializeToString(deterministic=True))
        return seen, list(response.status.to_act)

    async def actions(self) -> list[games_pb2.RecordedAction]:
        rows = await GameStore(self.service.layer, live_ttl_s=60, finished_ttl_s=60).read_actions(self.game_id)
        return [games_pb2.RecordedAction.FromString(row) for row in rows]

    async def clock(self) -> dict[bytes, bytes]:
        stored: dict[bytes, bytes] = await self.service.redis.hgetall(clock_key(self.game_id))
        return stored


@pytest.fixture(params=["connect4", "plus4", "coloursquare"])
async def game(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[tuple[Service, str]]:
    rules, codec = GAMES[request.param]
    async with rules_service(rules, codec, redis_url) as svc:
        yield svc, request.param


async def new_table(service: Service, name: str, seats: int = 2, seed: int = 424242) -> Table:
    rules, codec = GAMES[name]
    game_id = new_id("g")
    await service.stub.CreateGame(
        rules_pb2.CreateGameRequest(game_id=game_id, seats=seats, seed=seed, request_id=new_id("c"))
    )
    initial = rules.new_game(rules.default_options(), seats, seed)
    return Table(service, rules, GameEnvelope(codec), game_id, initial, seats, states=[initial])


async def test_a_draw_agreed_ends_the_game_once_and_is_recorded(game: tuple[Service, str]) -> None:
    service, name = game
    table = await new_table(service, name)
    await table.play(3)
    request = apply_request(table.game_id, 1, table.version, draw_agreed=rules_pb2.DrawAgreed(), turn_clock=CLOCK)
    response = await service.stub.ApplyMove(request)
    outcome = response.status.outcome
    assert response.status.over and response.version == 4 and not response.status.to_act
    assert (list(outcome.ranks), outcome.reason, outcome.draw, list(outcome.winners)) == (
        [1, 1],
        "DRAW_AGREED",
        True,
        [0, 1],
    )
    assert [event.WhichOneof("kind") for event in response.events] == ["ended"]
    # The clock was settled by the same write: no turn deadline is left.
    assert response.clock_armed and not response.HasField("turn_deadline")
    assert (await table.clock())[b"d"] == b"0" and (await table.clock())[b"v"] == b"4"
    # A retry is answered the same, applied once.
    again = await service.stub.ApplyMove(request)
    assert again.version == 4 and again.status == response.status and not again.clock_armed
    recorded = await table.actions()
    assert len(recorded) == 4 and recorded[-1].WhichOneof("action") == "draw_agreed" and recorded[-1].seat == 1
    # After the end nothing more applies: GAME_OVER, as a resignation would be.
    for action in (
        {"draw_agreed": rules_pb2.DrawAgreed()},
        {"abort": rules_pb2.Abort()},
        {"take_back": rules_pb2.TakeBack(to_version=2)},
    ):
        code, reason, _ = await refusal(service.stub.ApplyMove(apply_request(table.game_id, 0, 4, **action)))
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER"), action


async def test_an_abort_ends_the_game_with_no_result(game: tuple[Service, str]) -> None:
    service, name = game
    table = await new_table(service, name)
    await table.play(1)
    request = apply_request(table.game_id, 0, 1, abort=rules_pb2.Abort(), turn_clock=CLOCK)
    response = await service.stub.ApplyMove(request)
    outcome = response.status.outcome
    assert response.status.over and response.version == 2
    # Every seat shares the place, yet nobody won and it is no draw: a client reads ABORTED.
    assert (list(outcome.ranks), outcome.reason, outcome.draw, list(outcome.winners)) == ([1, 1], "ABORTED", False, [])
    assert (await table.clock())[b"d"] == b"0"
    assert (await service.stub.ApplyMove(request)).status == response.status
    recorded = await table.actions()
    assert recorded[-1].WhichOneof("action") == "aborted" and recorded[-1].seat == 0
    view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=table.game_id))
    assert view.status == response.status  # the state kept says so too (the codec round trip)


async def test_a_take_back_returns_to_exactly_the_position_of_its_version(game: tuple[Service, str]) -> None:
    service, name = game
    table = await new_table(service, name)
    await table.play(2)
    at_two = await table.views()
    await table.play(3)
    before = int(time.time() * 1000)
    request = apply_request(table.game_id, 0, 5, take_back=rules_pb2.TakeBack(to_version=2), turn_clock=CLOCK)
    response = await service.stub.ApplyMove(request)
    # A new version (versions only grow) whose position is version 2's, for every seat.
    assert response.version == 6 and not response.status.over
    assert [(e.WhichOneof("kind"), e.taken_back.to_version) for e in response.events] == [("taken_back", 2)]
    assert await table.views() == at_two
    assert list(response.status.to_act) == at_two[1]
    # The turn clock is armed for the position's seats by the same write.
    deadline = response.turn_deadline.ToMilliseconds()
    assert response.clock_armed and before + 30_000 <= deadline <= int(time.time() * 1000) + 30_000
    clock = await table.clock()
    assert clock[b"v"] == b"6" and clock[b"a"] == ",".join(map(str, at_two[1])).encode()
    assert int(clock[b"d"]) == deadline
    members = await service.redis.zrange(clocks_key(game_shard(table.game_id)), 0, -1)
    assert not [m for m in members if m.startswith(f"{table.game_id}|5|".encode())], "version 5's deadline is left"
    # Once per request id; the same id asking for another version is refused.
    again = await service.stub.ApplyMove(request)
    assert again.version == 6 and again.status == response.status and not again.clock_armed
    reused = apply_request(table.game_id, 0, 6, take_back=rules_pb2.TakeBack(to_version=1))
    reused.request_id = request.request_id
    code, reason, _ = await refusal(service.stub.ApplyMove(reused))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
    recorded = await table.actions()
    assert [(a.version, a.WhichOneof("action")) for a in recorded][-1] == (6, "taken_back_to")
    assert recorded[-1].taken_back_to == 2 and len(recorded) == 6
    # Play on from the position taken back to, then take back again, over the first take-back
    # (the replay follows it): version 7 is a move from version 2's position.
    table.state, table.version = table.states[2], 6
    table.states.append(table.state)
    await table.play(1)
    at_seven = await table.views()
    await table.play(1)
    response = await service.stub.ApplyMove(
        apply_request(table.game_id, 1, 8, take_back=rules_pb2.TakeBack(to_version=7))
    )
    assert response.version == 9 and await table.views() == at_seven
    response = await service.stub.ApplyMove(
        apply_request(table.game_id, 1, 9, take_back=rules_pb2.TakeBack(to_version=0))
    )
    assert response.version == 10 and not response.status.over
    fresh = await new_table(service, name)
    assert (await table.views())[0] == (await fresh.views())[0], "back to the start is the new game's position"


async def test_nothing_to_take_back_and_refusals_change_nothing(game: tuple[Service, str]) -> None:
    service, name = game
    table = await new_table(service, name)
    code, reason, _ = await refusal(
        service.stub.ApplyMove(apply_request(table.game_id, 0, 0, take_back=rules_pb2.TakeBack(to_version=0)))
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOTHING_TO_TAKE_BACK")
    await table.play(2)
    for to_version in (2, 3, 2**40):
        code, reason, _ = await refusal(
            service.stub.ApplyMove(
                apply_request(table.game_id, 0, 2, take_back=rules_pb2.TakeBack(to_version=to_version))
            )
        )
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOTHING_TO_TAKE_BACK"), to_version
    code, reason, _ = await refusal(
        service.stub.ApplyMove(apply_request(table.game_id, 0, 1, take_back=rules_pb2.TakeBack(to_version=0)))
    )
    assert (code, reason) == (grpc.StatusCode.ABORTED, "VERSION_MISMATCH")
    assert len(await table.actions()) == 2


async def test_a_draw_is_for_two_players_only(redis_url: str) -> None:
    async with rules_service(COLOURSQUARE, COLOURSQUARE_CODEC, redis_url) as service:
        for seats in (1, 3):
            table = await new_table(service, "coloursquare", seats=seats)
            code, reason, _ = await refusal(
                service.stub.ApplyMove(apply_request(table.game_id, 0, 0, draw_agreed=rules_pb2.DrawAgreed()))
            )
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "OFFER_NOT_ALLOWED")
            assert await table.actions() == []
            # An abort is for any table; it ranks every seat first with no winner.
            response = await service.stub.ApplyMove(apply_request(table.game_id, seats - 1, 0, abort=rules_pb2.Abort()))
            assert list(response.status.outcome.ranks) == [1] * seats and not response.status.outcome.winners


async def test_a_game_whose_record_cannot_rebuild_it_is_refused_a_take_back(redis_url: str) -> None:
    """A game made before seeds were kept replays from seed 0: exact for games without chance,
    and refused (never taken back to a position that never was) where the dice differ."""
    for name, expected in (("connect4", None), ("coloursquare", "OFFER_NOT_ALLOWED")):
        rules, codec = GAMES[name]
        async with rules_service(rules, codec, redis_url) as service:
            table = await new_table(service, name, seed=99)
            await table.play(2)
            await service.redis.hdel(game_keys(table.game_id).state, "z")
            call = service.stub.ApplyMove(
                apply_request(table.game_id, 0, 2, take_back=rules_pb2.TakeBack(to_version=1))
            )
            if expected is None:
                assert (await call).version == 3
            else:
                code, reason, _ = await refusal(call)
                assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, expected)
                assert len(await table.actions()) == 2


def test_an_aborted_outcome_has_no_winner_and_is_no_draw() -> None:
    aborted = Outcome(ranks=(1, 1), reason="ABORTED")
    assert aborted.winners == () and not aborted.is_draw
    agreed = Outcome(ranks=(1, 1), reason="DRAW_AGREED")
    assert agreed.winners == (0, 1) and agreed.is_draw
