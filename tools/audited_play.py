"""Games played through the public API whose every acknowledged move is noted, then checked against
the game's record: nothing acknowledged is missing, nothing is applied twice. Used where the platform
is disturbed mid-game (tests/containers: a gateway crash, a Redis restart; tools/swarm.py: a rolling
upgrade)."""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Sequence

from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2


class Acks:
    """Every move the players of one game saw acknowledged, by the version it made, with when; and
    `reached`, set at the `mid_game`-th, when a test breaks something."""

    def __init__(self, mid_game: int = 6) -> None:
        self.versions: list[int] = []
        self.times: list[float] = []
        self.mid_game = mid_game
        self.reached = asyncio.Event()

    def __call__(self, answer: play_pb2.SubmitMoveResponse) -> None:
        self.versions.append(answer.version)
        self.times.append(time.monotonic())
        if len(self.versions) >= self.mid_game:
            self.reached.set()

    def longest_pause_s(self) -> float:
        """The longest wait between two acknowledged moves of the game."""
        ordered = sorted(self.times)
        return max((b - a for a, b in itertools.pairwise(ordered)), default=0.0)


async def guests(count: int, targets: Sequence[str] | str, *, own_connection: bool = False) -> list[TafelClient]:
    clients = []
    for _ in range(count):
        client = await TafelClient.connect(
            targets if isinstance(targets, str) else list(targets), own_connection=own_connection
        )
        await client.sign_in_as_guest()
        clients.append(client)
    return clients


async def room_game(
    host: TafelClient, others: Sequence[TafelClient], game: str, per_move_s: float = 60
) -> tuple[str, list[int]]:
    """A private room filled by `others`; its game id and every player's seat (host first)."""
    room = await host.create_room(game, seats=1 + len(others), per_move_s=per_move_s)
    for other in others:
        await other.join_room(room.code)
    started = await asyncio.wait_for(host.wait_room_started(room.code), 60)
    seats = [(await client.get_game(started.game_id)).seat for client in (host, *others)]
    return started.game_id, seats


async def play_out(
    clients: Sequence[TafelClient],
    game_id: str,
    seats: Sequence[int],
    game: str,
    acks: Acks,
    *,
    think_s: float = 0.0,
    timeout_s: float = 180.0,
) -> list[games_pb2.Outcome]:
    """Every client plays its seat to the end with a level-1 bot's moves (seeded per game, so the
    games differ)."""
    seed = random.randrange(2**32)
    return await asyncio.wait_for(
        asyncio.gather(
            *(
                play_game(client, game_id, seat, strategy_for(game, 1, seed=seed + seat), think_s=think_s, on_move=acks)
                for client, seat in zip(clients, seats, strict=True)
            )
        ),
        timeout_s,
    )


async def record_problem(
    client: TafelClient, game_id: str, acks: Acks, outcome: games_pb2.Outcome, lost_answers: int = 0
) -> str | None:
    """What is wrong with the game's record, or None. Every acknowledged version is distinct and in
    the record, and the record holds no more moves than were acknowledged plus `lost_answers` (a
    crash may lose an answer, never a move)."""
    record = await client.get_record(game_id)
    if record.outcome != outcome:
        return "the record's outcome is not the one the players saw"
    if len(acks.versions) != len(set(acks.versions)):
        return f"a version acknowledged twice: {sorted(acks.versions)}"
    if acks.versions and max(acks.versions) > len(record.actions):
        return f"acknowledged version {max(acks.versions)} missing: the record has {len(record.actions)} actions"
    if not len(acks.versions) <= len(record.actions) <= len(acks.versions) + lost_answers:
        return f"{len(record.actions)} actions in the record for {len(acks.versions)} acknowledged moves"
    return None
