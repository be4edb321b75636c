"""Bots from the Python SDK (clients/python/tafel: botplay's strategies, autoplay's game loop),
each on its own guest account, that join a browser player's room by its invite code (or find a
match with each other), in a thread with its own event loop (Playwright's sync API owns the
test's thread)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient


class SdkBots:
    """`count` level-`level` bots joining room `code` (no code: matchmaking among themselves),
    thinking `think_s` per move. `matched` is set once they are seated (`game_id`); `join()` waits
    for the end and re-raises the first bot's error."""

    def __init__(
        self, addresses: Sequence[str], code: str, game: str, count: int, level: int = 1, think_s: float = 0.0
    ) -> None:
        self.addresses = list(addresses)
        self.code = code
        self.game = game
        self.level = level
        self.think_s = think_s
        self.errors: list[BaseException] = []
        self.matched = threading.Event()
        self.game_id = ""
        self.moves = 0  # moves the bots made, all together

        async def main() -> None:
            results = await asyncio.gather(*(self._bot() for _ in range(count)), return_exceptions=True)
            self.errors.extend(r for r in results if isinstance(r, BaseException))

        self.thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
        self.thread.start()

    async def _bot(self) -> None:
        async with await TafelClient.connect(self.addresses) as client:
            await client.sign_in_as_guest()
            if self.code:
                room = await client.join_room(self.code)
                if not room.game_id:
                    room = await client.wait_room_started(self.code)
                game_id = room.game_id
                seat = (await client.get_game(game_id)).seat
            else:
                match = await client.find_match(self.game)
                game_id, seat = match.game_id, match.seat
            self.game_id = game_id
            self.matched.set()

            def moved(_: object) -> None:
                self.moves += 1

            strategy = strategy_for(self.game, self.level)
            await play_game(client, game_id, seat, strategy, think_s=self.think_s, timeout_s=300, on_move=moved)

    def join(self, timeout_s: float = 60.0) -> None:
        self.thread.join(timeout_s)
        assert not self.thread.is_alive(), "the SDK bots did not finish their game"
        if self.errors:
            raise self.errors[0]
