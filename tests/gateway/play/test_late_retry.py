"""A retry of an applied move that comes after the game moved on gets the first answer whole,
turn deadline included (the clock in Redis holds only the current version's deadline)."""

from __future__ import annotations

from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Client, Seating


async def test_a_late_retry_of_an_applied_move_keeps_its_turn_deadline(
    gw_system: GatewaySystem, seats: Seating, clients: list[Client]
) -> None:
    a, b, _ = clients
    game_id = await seats.start([a.player, b.player], per_move_s=30.0)
    first = await a.move(game_id, 0, 3, request_id="late-retry")
    assert first.HasField("turn_deadline")
    await b.move(game_id, 1, 4)
    await a.move(game_id, 2, 3)
    # Through the other gateway, two versions later: the same answer, its deadline included.
    elsewhere = Client(b.address)
    elsewhere.session = a.session
    try:
        again = await elsewhere.move(game_id, 0, 3, request_id="late-retry")
    finally:
        await elsewhere.close()
    assert again.version == first.version == 1
    assert list(again.events) == list(first.events)
    assert again.HasField("turn_deadline")
    assert again.turn_deadline.ToMilliseconds() == first.turn_deadline.ToMilliseconds()
