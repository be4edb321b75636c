"""One whole Plus 4 game through the public API: a Plus 4 rules process and a gateway process
started the way `make run` starts them, two guests matched by the matchmaking queue, every move
submitted through the gateway, a reference game replayed to its end."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2, play_pb2_grpc
from tafel.plus4.v1 import plus4_pb2 as pb

from tests.gateway.harness import Client, Proc, new_id, spawn_gateway, spawn_rules

GAMES = json.loads((Path(__file__).resolve().parents[2] / "data" / "plus4" / "plus4.json").read_text())["games"]
MODES = {"points": pb.MODE_POINTS, "first_line": pb.MODE_FIRST_LINE, "rounds": pb.MODE_ROUNDS}


@pytest.fixture(scope="module")
def gateway(redis_url: str) -> Iterator[Proc]:
    rules = spawn_rules(redis_url, "plus4")
    try:
        gw = spawn_gateway(redis_url, {"plus4": rules.address}, name="plus4-gateway")
        try:
            yield gw
        finally:
            gw.stop()
    finally:
        rules.stop()


@pytest.fixture
async def players(gateway: Proc) -> AsyncIterator[list[Client]]:
    made = [await Client(gateway.address).guest(), await Client(gateway.address).guest()]
    try:
        yield made
    finally:
        for client in made:
            await client.close()


async def find_match(client: Client, options: games_pb2.GameOptions) -> play_pb2.MatchFound:
    lobby = play_pb2_grpc.LobbyServiceStub(client.channel)
    call = lobby.FindMatch(play_pb2.FindMatchRequest(game="plus4", options=options), metadata=client.md, timeout=20)
    async for response in call:
        if response.WhichOneof("status") == "matched":
            return response.matched
    raise AssertionError("the match stream ended without a match")


async def test_plus4_is_listed_by_the_lobby(players: list[Client]) -> None:
    lobby = play_pb2_grpc.LobbyServiceStub(players[0].channel)
    types = await lobby.ListGameTypes(play_pb2.ListGameTypesRequest(), metadata=players[0].md, timeout=10)
    plus4 = [t for t in types.game_types if t.game == "plus4"]
    assert len(plus4) == 1 and plus4[0].title == "Plus 4"
    assert {o.name for o in plus4[0].options} == {"mode", "target", "move_limit"}


async def test_a_matched_game_plays_to_the_end_through_the_gateway(players: list[Client]) -> None:
    game: dict[str, Any] = GAMES[1]  # a first_line game
    opts = game["options"]
    options = games_pb2.GameOptions(
        plus4=pb.Options(mode=MODES[opts["mode"]], target=opts["target"], move_limit=opts["move_limit"])
    )
    found = await asyncio.gather(*(find_match(p, options) for p in players))
    assert found[0].game_id == found[1].game_id
    game_id = found[0].game_id
    by_seat = {match.seat: client for match, client in zip(found, players, strict=True)}
    assert set(by_seat) == {0, 1}

    response = None
    for version, step in enumerate(game["steps"]):
        column, bonus = step["move"]
        response = await by_seat[step["player"]].games.SubmitMove(
            play_pb2.SubmitMoveRequest(
                game_id=game_id,
                expected_version=version,
                request_id=new_id(),
                move=games_pb2.GameMove(plus4=pb.Move(column=column, bonus=bonus)),
            ),
            metadata=by_seat[step["player"]].md,
            timeout=10,
        )
        assert response.version == version + 1
    assert response is not None and response.status.over
    last = game["steps"][-1]["after"]
    assert response.status.outcome.reason == last["result"]["reason"]
    assert list(response.status.outcome.winners) == [last["result"]["winner"]]

    got = await by_seat[0].get(game_id)
    assert got.summary.game == "plus4" and got.seat == 0
    view = got.view.plus4
    frame = [
        [[sq.disc.colour, sq.disc.bonus] if sq.HasField("disc") else None for sq in row.squares] for row in view.frame
    ]
    assert frame == last["board"]
    assert [[s.ordinary, s.bonus] for s in view.supplies] == last["supplies"]
    assert view.moves_made == len(game["steps"]) and len(view.scored_lines) == len(last["scored_lines"])
