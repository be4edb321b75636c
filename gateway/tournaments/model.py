"""A tournament's state as plain values: entrants, rounds, games and results. Pure (no I/O); the
service stores it as JSON (`to_json` / `from_json`).

Points of one game, per seat (`game_points`): a two-seat game gives 1 for a win, 0.5 for a draw, 0
for a loss. A table of n seats counts each seat's result against every other seat by finishing
rank (ahead 1, level 0.5, behind 0) and divides by n - 1, so a table win is 1, last place 0, and a
shared place the average of the places it spans: the same scale as a two-seat game. A bye gives
`Config.bye_points` (1, a pairing-allocated bye as FIDE scores it). A seat marked `absent` (a
withdrawn player's forfeit, no game played) scores 0, and beats no one; a present seat beats an
absent one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cached_property
from typing import Any


class Format(StrEnum):
    SWISS = "swiss"
    ROUND_ROBIN = "round_robin"
    KNOCKOUT = "knockout"
    # Swiss-style rounds of multi-seat tables, ranked by finishing place then score.
    TABLES = "tables"
    # Two seats for a fixed time, players paired again as soon as they are free (arena.py).
    ARENA = "arena"


# What makes the tables format: a table seats three or more (two seats are a duel: the other
# formats). How many at most is the game's (its DescribeGame max_seats, Config.largest_table).
MIN_TABLE = 3


@dataclass(frozen=True)
class Config:
    format: Format
    # Swiss and tables: the number of rounds (at least 1). Round robin and knockout: fixed by the
    # entrants (n - 1 or n rounds; ceil(log2 n) rounds) and ignored here.
    rounds: int = 0
    # Tables: the preferred table size; tables hold MIN_TABLE..largest_table seats (fewer only when
    # fewer remain). largest_table is the game's most seats, from its rules service.
    table_size: int = 4
    largest_table: int = 0
    bye_points: float = 1.0
    # Knockout: extra games after a drawn match game; a match still drawn after this many goes to
    # the higher seed.
    max_deciders: int = 3
    # Games missed in a row (no move made, lost on time) that withdraw a player.
    misses_to_withdraw: int = 2

    def __post_init__(self) -> None:
        if self.format in (Format.SWISS, Format.TABLES) and self.rounds < 1:
            raise ValueError("Swiss and table tournaments need at least one round")
        if self.format is Format.TABLES and not MIN_TABLE <= self.table_size <= self.largest_table:
            raise ValueError(f"tables seat {MIN_TABLE} to the game's most ({self.largest_table})")
        if self.max_deciders < 0 or self.misses_to_withdraw < 1:
            raise ValueError("bad knockout or forfeit settings")

    @property
    def two_seat(self) -> bool:
        return self.format is not Format.TABLES


@dataclass(frozen=True)
class Entrant:
    player_id: str
    username: str = ""
    rating: float = 1500.0
    guest: bool = False


@dataclass(frozen=True)
class Result:
    """How one game (or forfeit) ended, per seat."""

    # Competition rank per seat: 1 = best, equal ranks share a place.
    ranks: tuple[int, ...]
    # The game's own score per seat; empty when the game keeps none.
    scores: tuple[int, ...] = ()
    # Per seat: the player made no move in this game and lost it on time (a missed game).
    missed: tuple[bool, ...] = ()
    # Per seat: not there at all (withdrawn before the game); no game was played for this result.
    absent: tuple[bool, ...] = ()

    @property
    def unplayed(self) -> bool:
        return any(self.absent)

    def is_missed(self, seat: int) -> bool:
        return bool(self.missed) and self.missed[seat]

    def is_absent(self, seat: int) -> bool:
        return bool(self.absent) and self.absent[seat]

    def score(self, seat: int) -> int:
        return self.scores[seat] if self.scores else 0


@dataclass(frozen=True)
class Game:
    """One game of a round: players by seat. A bye is a one-seat "game" with no game behind it."""

    board: int
    seats: tuple[str, ...]
    # Knockout: 0 for a match's first game, 1.. for the deciders after draws.
    decider: int = 0
    bye: bool = False
    result: Result | None = None
    # Ended by a director's TerminateTournament before it finished: decided, but not counted.
    aborted: bool = False
    # Decided by a director (CorrectResult): the reason given ("" = as played).
    note: str = ""

    @property
    def done(self) -> bool:
        return self.bye or self.result is not None or self.aborted

    @property
    def needs_game(self) -> bool:
        """A real game has to be played for this (not a bye, not a forfeit)."""
        return not self.bye and (self.result is None or not self.result.unplayed)

    def seat_of(self, player_id: str) -> int:
        return self.seats.index(player_id)


@dataclass(frozen=True)
class Round:
    number: int  # 1-based
    games: tuple[Game, ...]

    @property
    def done(self) -> bool:
        return all(game.done for game in self.games)

    def game(self, board: int, decider: int = 0) -> Game | None:
        for game in self.games:
            if game.board == board and game.decider == decider:
                return game
        return None


# -- the arena's tallies (arena.py keeps its rules) -----------------------------------------------


@dataclass(frozen=True)
class Tally:
    """One player's arena so far."""

    points: int = 0
    streak: int = 0  # wins in a row now
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    # Sum over games of the opponent's rating ±500 (win/loss): performance = this / games.
    rating_sum: float = 0.0
    firsts: int = 0  # games in seat 0
    last: str = ""  # the opponent of the latest game ("" = none yet)
    board: int = 0  # the game being played (0 = free)
    paused: bool = False

    @property
    def performance(self) -> float:
        return self.rating_sum / self.games if self.games else 0.0


@dataclass(frozen=True)
class Arena:
    tallies: Mapping[str, Tally]
    # Arena points per seat of each decided game, by board.
    points: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    # The time of the last standings event (the driver sends them at most every few seconds).
    standings_ms: int = 0


@dataclass(frozen=True)
class State:
    config: Config
    # In seed order: rating high to low, then registration order. Seed 1 = entrants[0].
    entrants: tuple[Entrant, ...]
    rounds: tuple[Round, ...] = ()
    # Withdrawn players, in the order they left (voluntarily or after missed games).
    withdrawn: tuple[str, ...] = ()
    finished: bool = False
    # Directors' hold on the next round (PauseTournament), the round a director released
    # (StartNextRound: it starts whatever its schedule), the round whose wait was announced
    # (TournamentRoundScheduled, once), an early end, and the banned players (withdrawn as well).
    paused: bool = False
    released: int = 0
    held: int = 0
    terminated: bool = False
    banned: tuple[str, ...] = ()
    # Arena: the players' running tallies (arena.py); None for the other formats.
    arena: Arena | None = None
    _index: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self._index:
            object.__setattr__(self, "_index", {e.player_id: i for i, e in enumerate(self.entrants)})

    def seed(self, player_id: str) -> int:
        """0-based seed position (0 = top seed)."""
        return self._index[player_id]

    def entrant(self, player_id: str) -> Entrant:
        return self.entrants[self._index[player_id]]

    @cached_property
    def _withdrawn_set(self) -> frozenset[str]:
        # Asked per player by pairing and standings: a tuple scan made them quadratic once
        # thousands had withdrawn (10,000 players, 2,000 withdrawn: standings 0.49 s -> 0.15 s).
        return frozenset(self.withdrawn)

    def is_withdrawn(self, player_id: str) -> bool:
        return player_id in self._withdrawn_set

    def active(self) -> list[str]:
        gone = self._withdrawn_set
        return [e.player_id for e in self.entrants if e.player_id not in gone]

    @property
    def current(self) -> Round | None:
        return self.rounds[-1] if self.rounds else None

    def all_games(self) -> Iterator[tuple[int, Game]]:
        for rnd in self.rounds:
            for game in rnd.games:
                yield rnd.number, game

    def with_round(self, rnd: Round) -> State:
        rounds = list(self.rounds)
        if rounds and rounds[-1].number == rnd.number:
            rounds[-1] = rnd
        else:
            rounds.append(rnd)
        return replace(self, rounds=tuple(rounds))


def game_points(game: Game, seat: int, bye_points: float = 1.0) -> float:
    if game.bye:
        return bye_points
    result = game.result
    if result is None:
        return 0.0
    n = len(game.seats)
    if n < 2 or result.is_absent(seat):
        return 0.0
    total = 0.0
    for other in range(n):
        if other == seat:
            continue
        if result.is_absent(other):
            total += 1.0
        elif result.ranks[seat] < result.ranks[other]:
            total += 1.0
        elif result.ranks[seat] == result.ranks[other]:
            total += 0.5
    return total / (n - 1)


# -- JSON ------------------------------------------------------------------------------------------


def _result_to(result: Result | None) -> Any:
    if result is None:
        return None
    out: dict[str, Any] = {"r": list(result.ranks)}
    if result.scores:
        out["s"] = list(result.scores)
    if any(result.missed):
        out["m"] = [int(x) for x in result.missed]
    if any(result.absent):
        out["a"] = [int(x) for x in result.absent]
    return out


def _result_from(data: Any) -> Result | None:
    if data is None:
        return None
    return Result(
        ranks=tuple(int(x) for x in data["r"]),
        scores=tuple(int(x) for x in data.get("s", ())),
        missed=tuple(bool(x) for x in data.get("m", ())),
        absent=tuple(bool(x) for x in data.get("a", ())),
    )


def to_json(state: State) -> str:
    cfg = state.config
    data: dict[str, Any] = {
        "c": {
            "f": cfg.format.value,
            "n": cfg.rounds,
            "t": cfg.table_size,
            "h": cfg.largest_table,
            "b": cfg.bye_points,
            "d": cfg.max_deciders,
            "w": cfg.misses_to_withdraw,
        },
        "e": [[e.player_id, e.username, e.rating, int(e.guest)] for e in state.entrants],
        "x": list(state.withdrawn),
        "f": int(state.finished),
    }
    # Directors' fields only when set: a tournament no one directed stores as before.
    if state.paused:
        data["p"] = 1
    if state.released:
        data["rel"] = state.released
    if state.held:
        data["held"] = state.held
    if state.terminated:
        data["term"] = 1
    if state.banned:
        data["ban"] = list(state.banned)
    if state.arena is not None:
        data["a"] = arena_to_data(state.arena)
    rounds = ",".join(f"[{rnd.number},[{','.join(_game_json(g) for g in rnd.games)}]]" for rnd in state.rounds)
    head = json.dumps(data, separators=(",", ":"))
    return f'{head[:-1]},"r":[{rounds}]}}'


# Games as JSON by identity: a state is saved after each change, and all but its new or changed
# games are the very objects of the state before (dataclasses.replace shares them), so a big
# tournament's save encodes a few games instead of thousands (10,000: ~0.1 s each save).
_ENCODED: dict[int, tuple[Game, str]] = {}
ENCODED_KEPT = 50_000


def _game_json(g: Game) -> str:
    hit = _ENCODED.get(id(g))
    if hit is not None and hit[0] is g:
        return hit[1]
    text = json.dumps(_game_to(g), separators=(",", ":"))
    if len(_ENCODED) >= ENCODED_KEPT:
        _ENCODED.clear()
    _ENCODED[id(g)] = (g, text)  # held, so the id stays this game's
    return text


def from_json(text: str | bytes) -> State:
    data = json.loads(text)
    c = data["c"]
    config = Config(
        format=Format(c["f"]),
        rounds=int(c["n"]),
        table_size=int(c["t"]),
        # Written before "h" existed: tables no larger than the preferred size.
        largest_table=int(c["h"] if "h" in c else c["t"]),
        bye_points=float(c["b"]),
        max_deciders=int(c["d"]),
        misses_to_withdraw=int(c["w"]),
    )
    entrants = tuple(Entrant(str(e[0]), str(e[1]), float(e[2]), bool(e[3])) for e in data["e"])
    rounds = tuple(
        Round(
            int(number),
            tuple(_game_from(g) for g in games),
        )
        for number, games in data["r"]
    )
    return State(
        config,
        entrants,
        rounds,
        tuple(str(p) for p in data["x"]),
        bool(data["f"]),
        paused=bool(data.get("p", 0)),
        released=int(data.get("rel", 0)),
        held=int(data.get("held", 0)),
        terminated=bool(data.get("term", 0)),
        banned=tuple(str(p) for p in data.get("ban", ())),
        arena=_arena_from(data.get("a")),
    )


def _arena_from(data: Any) -> Arena | None:
    return None if data is None else arena_from_data(data)


def arena_to_data(arena: Arena) -> Any:
    return {
        "t": {
            pid: [
                t.points,
                t.streak,
                t.games,
                t.wins,
                t.draws,
                t.losses,
                t.rating_sum,
                t.firsts,
                t.last,
                t.board,
                int(t.paused),
            ]
            for pid, t in arena.tallies.items()
        },
        "p": {str(board): list(pts) for board, pts in arena.points.items()},
        "s": arena.standings_ms,
    }


def arena_from_data(data: Any) -> Arena:
    tallies = {
        str(pid): Tally(
            int(v[0]),
            int(v[1]),
            int(v[2]),
            int(v[3]),
            int(v[4]),
            int(v[5]),
            float(v[6]),
            int(v[7]),
            str(v[8]),
            int(v[9]),
            bool(v[10]),
        )
        for pid, v in data["t"].items()
    }
    points = {int(board): tuple(int(x) for x in pts) for board, pts in data["p"].items()}
    return Arena(tallies, points, int(data.get("s", 0)))


def _game_to(g: Game) -> list[Any]:
    out: list[Any] = [g.board, list(g.seats), g.decider, int(g.bye), _result_to(g.result)]
    if g.aborted or g.note:
        out += [int(g.aborted), g.note]
    return out


def _game_from(g: list[Any]) -> Game:
    aborted, note = (bool(g[5]), str(g[6])) if len(g) > 6 else (False, "")
    return Game(int(g[0]), tuple(str(p) for p in g[1]), int(g[2]), bool(g[3]), _result_from(g[4]), aborted, note)
