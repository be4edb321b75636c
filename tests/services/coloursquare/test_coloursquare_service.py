"""The Colour Square rules service over real gRPC against a real Redis."""

from __future__ import annotations

import random
import struct
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from tafel.coloursquare.v1 import coloursquare_pb2 as pb
from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2
from tafel_rules.coloursquare.model import Move, Options, Phase, State
from tafel_rules.coloursquare.rules import RULES

from services.coloursquare.codec import CODEC
from services.host.store import GameStore
from tests.services.rules_harness import Service, apply_request, new_id, refusal, rules_service


@pytest.fixture
async def service(redis_url: str) -> AsyncIterator[Service]:
    async with rules_service(RULES, CODEC, redis_url) as svc:
        yield svc


def cs(move: Move) -> games_pb2.GameMove:
    return games_pb2.GameMove(coloursquare=CODEC.move_to_proto(move))


async def create(service: Service, seats: int, seed: int, **options: Any) -> str:
    game_id = new_id("g")
    response = await service.stub.CreateGame(
        rules_pb2.CreateGameRequest(
            game_id=game_id,
            seats=seats,
            seed=seed,
            request_id=new_id("c"),
            options=games_pb2.GameOptions(coloursquare=pb.Options(**options)),
        )
    )
    assert list(response.status.to_act) == list(range(seats)) and response.status.version == 0
    return game_id


async def test_describe_game(service: Service) -> None:
    response = await service.stub.DescribeGame(rules_pb2.DescribeGameRequest())
    assert (response.game, response.title, response.min_seats, response.max_seats) == (
        "coloursquare",
        "Colour Square",
        1,
        6,
    )
    options = {o.name: o for o in response.options}
    assert list(options["side"].choice.choices) == ["A", "B"] and options["side"].choice.default_value == "A"
    assert (options["target"].integer.minimum, options["target"].integer.default_value) == (0, 0)
    assert options["timeouts_to_remove"].integer.default_value == 3
    assert options["max_rounds"].integer.default_value == 200
    assert response.default_options.coloursquare.side == "A"
    # What the gateway's ratings read: tables and duels apart, solo bests per sheet.
    pools = [(p.name, p.min_seats, p.max_seats) for p in response.rating_pools]
    assert pools == [("coloursquare", 3, 6), ("coloursquare-duel", 2, 2)]
    assert (response.personal_bests.name, response.personal_bests.board_option) == ("coloursquare-solo", "side")


async def test_a_whole_three_player_game_matches_the_pure_rules(service: Service) -> None:
    """Play a whole game through gRPC, mirroring it with the pure rules (same seed)."""
    seed = 987654321
    game_id = await create(service, 3, seed)
    local = RULES.new_game(Options(), 3, seed)
    rng = random.Random(1)
    version = 0
    while local.phase is not Phase.OVER:
        seat = rng.choice(sorted(RULES.to_act(local)))
        moves = RULES.legal_moves(local, seat)
        move = moves[rng.randrange(len(moves))]
        local, events = RULES.apply_move(local, seat, move)
        response = await service.stub.ApplyMove(apply_request(game_id, seat, version, move=cs(move)))
        version += 1
        assert response.version == version
        assert len(response.events) == len(events)
        assert sorted(response.status.to_act) == sorted(RULES.to_act(local))
    assert response.status.over and response.events[-1].WhichOneof("kind") == "ended"
    outcome = RULES.outcome(local)
    assert outcome is not None
    assert list(response.status.outcome.scores) == list(outcome.scores)
    assert list(response.status.outcome.ranks) == list(outcome.ranks)
    view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id, seat=2))
    assert view.view.coloursquare == CODEC.view_to_proto(RULES.view(local, 2))
    assert view.view.coloursquare.result.reason == outcome.reason


async def test_views_never_show_the_generator_or_unrevealed_placements(service: Service) -> None:
    seed = 0x1234_5678_9ABC
    game_id = await create(service, 2, seed)
    local = RULES.new_game(Options(), 2, seed)
    secrets = [struct.pack("<Q", local.rng), str(local.rng).encode(), struct.pack("<Q", seed), str(seed).encode()]
    move = RULES.legal_moves(local, 0)[0]
    response = await service.stub.ApplyMove(apply_request(game_id, 0, 0, move=cs(move)))
    event = response.events[0].coloursquare
    assert event.WhichOneof("kind") == "placement_submitted" and event.placement_submitted.seat == 0
    for seat in (0, 1, None):
        request = rules_pb2.GetViewRequest(game_id=game_id)
        if seat is not None:
            request.seat = seat
        reply = await service.stub.GetView(request)
        data = reply.SerializeToString()
        assert not any(secret in data for secret in secrets)
        view = reply.view.coloursquare
        assert (view.roll.red, view.roll.white) == (local.roll[0], local.roll[4])  # type: ignore[index]
        assert view.players[0].placed
        assert all(c == 0 for sq in view.players[0].squares for c in sq.cells)  # not yet revealed
        assert view.HasField("own_pending") == (seat == 0)


async def test_illegal_and_malformed_placements(service: Service) -> None:
    game_id = await create(service, 2, 5)
    bad_die = pb.Move(placements=[pb.Placement(joker=0)])
    cases = [
        (0, games_pb2.GameMove(coloursquare=pb.Move()), grpc.StatusCode.FAILED_PRECONDITION, "MUST_PLACE"),
        (
            0,
            games_pb2.GameMove(coloursquare=pb.Move(placements=[pb.Placement(die=pb.DIE_WHITE, joker=0)])),
            grpc.StatusCode.FAILED_PRECONDITION,
            "WRONG_DIE_FOR_ROLE",
        ),
        (1, games_pb2.GameMove(coloursquare=bad_die), grpc.StatusCode.INVALID_ARGUMENT, "BAD_DIE"),
        (
            1,
            games_pb2.GameMove(
                coloursquare=pb.Move(
                    placements=[pb.Placement(die=pb.DIE_WHITE, cell=pb.Cell(row=7, column=0, colour=pb.COLOUR_RED))]
                )
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "BAD_TARGET",
        ),
        # Out of range by any amount: the same rule as every game's (the contract's out-of-range rule; was
        # INVALID_ARGUMENT past 1000).
        (
            1,
            games_pb2.GameMove(
                coloursquare=pb.Move(
                    placements=[pb.Placement(die=pb.DIE_WHITE, cell=pb.Cell(row=9999, column=0, colour=pb.COLOUR_RED))]
                )
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "BAD_TARGET",
        ),
        (
            1,
            games_pb2.GameMove(coloursquare=pb.Move(placements=[pb.Placement(die=pb.DIE_WHITE, joker=5000)])),
            grpc.StatusCode.FAILED_PRECONDITION,
            "BAD_TARGET",
        ),
    ]
    for seat, move, code, reason in cases:
        got = await refusal(service.stub.ApplyMove(apply_request(game_id, seat, 0, move=move)))
        assert got[:2] == (code, reason), reason
        assert got[2] and "Traceback" not in got[2]
    code, reason, _ = await refusal(
        service.stub.CreateGame(
            rules_pb2.CreateGameRequest(
                game_id=new_id("g"), seats=2, options=games_pb2.GameOptions(coloursquare=pb.Options(target=50))
            )
        )
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_OPTIONS")
    view = await service.stub.GetView(rules_pb2.GetViewRequest(game_id=game_id))
    assert view.status.version == 0


async def test_simultaneous_placements_commute(service: Service) -> None:
    # Commuting placements (docs/architecture.md, "Contract rules"; behaviour changed on purpose): placements of different seats in one round
    # commute, so one made against an older version of the same round is accepted when still legal.
    game_id = await create(service, 3, 6)
    local = RULES.new_game(Options(), 3, 6)
    moves = {s: RULES.legal_moves(local, s)[0] for s in range(3)}
    await service.stub.ApplyMove(apply_request(game_id, 2, 0, move=cs(moves[2])))
    # Seat 0 placed against the version it saw before seat 2's placement: accepted at version 2.
    response = await service.stub.ApplyMove(apply_request(game_id, 0, 0, move=cs(moves[0])))
    assert response.version == 2
    # Placing twice is still refused: against the current version the rules say why; against an
    # older one the mover is behind (ABORTED with the current version, as before).
    code, reason, _ = await refusal(service.stub.ApplyMove(apply_request(game_id, 0, 2, move=cs(moves[0]))))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
    code, reason, _ = await refusal(service.stub.ApplyMove(apply_request(game_id, 0, 0, move=cs(moves[0]))))
    assert (code, reason) == (grpc.StatusCode.ABORTED, "VERSION_MISMATCH")
    # A version from the future is no round's: refused.
    code, reason, _ = await refusal(service.stub.ApplyMove(apply_request(game_id, 1, 9, move=cs(moves[1]))))
    assert (code, reason) == (grpc.StatusCode.ABORTED, "VERSION_MISMATCH")
    response = await service.stub.ApplyMove(apply_request(game_id, 1, 0, move=cs(moves[1])))
    inner = [e.coloursquare.WhichOneof("kind") for e in response.events]
    assert inner[0] == "placement_submitted" and "round_resolved" in inner and inner[-1] == "dice_rolled"
    assert list(response.status.to_act) == [0, 1, 2]
    assert response.version == 3
    # Round 2 began at version 3: a placement against round 1's versions does not commute.
    code, reason, _ = await refusal(service.stub.ApplyMove(apply_request(game_id, 1, 2, move=cs(moves[1]))))
    assert (code, reason) == (grpc.StatusCode.ABORTED, "VERSION_MISMATCH")
    # Timeouts and resignations never commute: the version check stays.
    code, reason, _ = await refusal(service.stub.ApplyMove(apply_request(game_id, 1, 2, timeout=rules_pb2.Timeout())))
    assert (code, reason) == (grpc.StatusCode.ABORTED, "VERSION_MISMATCH")


async def test_timeouts_remove_a_player_and_resignation(service: Service) -> None:
    game_id = await create(service, 3, 8, timeouts_to_remove=2)
    local = RULES.new_game(Options(timeouts_to_remove=2), 3, 8)
    version = 0
    for rnd in range(2):
        for seat in (0, 1):
            move = RULES.legal_moves(local, seat)[0]
            local, _ = RULES.apply_move(local, seat, move)
            await service.stub.ApplyMove(apply_request(game_id, seat, version, move=cs(move)))
            version += 1
        local, _ = RULES.timeout(local, 2)
        response = await service.stub.ApplyMove(apply_request(game_id, 2, version, timeout=rules_pb2.Timeout()))
        version += 1
        assert response.events[0].timed_out.seat == 2
        assert response.events[0].timed_out.removed == (rnd == 1)
    assert response.events[1].coloursquare.player_removed.removal == pb.REMOVAL_TIMEOUTS
    assert list(response.status.to_act) == [0, 1]
    response = await service.stub.ApplyMove(apply_request(game_id, 1, version, resignation=rules_pb2.Resignation()))
    version += 1
    assert response.events[0].WhichOneof("kind") == "resigned"
    assert list(response.status.to_act) == [0]
    store = GameStore(service.layer, live_ttl_s=60, finished_ttl_s=60)
    events = await store.read_events(game_id)
    assert events[0][0] == "0-1" and len(events) > 8
    state: State = CODEC.state_from_bytes((await store.load(game_id)).state)  # type: ignore[union-attr]
    assert state == RULES.resign(local, 1)[0]
