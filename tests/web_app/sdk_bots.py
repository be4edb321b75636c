"""Bots from the Python SDK (clients/python/tafel: botplay's strategies, autoplay's game loop)
that join a browser player's room by its invite code and play to the end, each on its own guest
account, in a thread with its own event loop (Playwright's sync API owns the test's thread)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient


async def _bot(addresses: Sequence[str], code: str, game: str, level: int) -> None:
    async with await TafelClient.connect(list(addresses)) as client:
        await client.sign_in_as_guest()
        room = await client.join_room(code)
        if not room.game_id:
            room = await client.wait_room_started(code)
        state = await client.get_game(room.game_id)
        await play_game(client, room.game_id, state.seat, strategy_for(game, level), timeout_s=300)


class SdkBots:
    """`count` level-`level` bots joining room `code`; `join()` re-raises the first bot's error."""

    def __init__(self, addresses: Sequence[str], code: str, game: str, count: int, level: int = 1) -> None:
        self.errors: list[BaseException] = []

        async def main() -> None:
            results = await asyncio.gather(
                *(_bot(addresses, code, game, level) for _ in range(count)), return_exceptions=True
            )
            self.errors.extend(r for r in results if isinstance(r, BaseException))

        self.thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
        self.thread.start()

    def join(self, timeout_s: float = 60.0) -> None:
        self.thread.join(timeout_s)
        assert not self.thread.is_alive(), "the SDK bots did not finish their game"
        if self.errors:
            raise self.errors[0]
