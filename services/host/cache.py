"""The rules service's memory of the games it played last: each game's state at its version, so
the next move of a game is judged without reading Redis. Only a cache: every commit is checked
against Redis's version, so any replica can serve any game, and a stale entry costs one read."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, TypeVar

from services.host.store import CommitKeys, StoredGame

StateT = TypeVar("StateT")


@dataclass
class CachedGame(Generic[StateT]):
    version: int
    state: StateT
    game: StoredGame
    window_from: int | None  # the version the state's commuting window began at
    keys: CommitKeys  # the keys its commits name


class GameCache(Generic[StateT]):
    """The `size` games used last (none kept when size <= 0)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._games: OrderedDict[str, CachedGame[StateT]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._games)

    def get(self, game_id: str) -> CachedGame[StateT] | None:
        return self._games.get(game_id)

    def remember(self, game_id: str, game: CachedGame[StateT]) -> None:
        if self.size <= 0:
            return
        self._games[game_id] = game
        self._games.move_to_end(game_id)
        while len(self._games) > self.size:
            self._games.popitem(last=False)

    def forget(self, game_id: str) -> None:
        self._games.pop(game_id, None)
