"""Arena, pure: a fixed duration in which every free player is paired again at once.

The arena's games are the tournament's one round, numbered 0 (`State.rounds == (Round(0, games),)`),
board n being the n-th game paired: its game id is `engine.game_id(tid, 0, game)` (`<tid>-r0b<n>`),
so a wave that is retried pairs and starts the same games. Beside the games, `State.arena` keeps
each player's running tally (points, streak, the game being played, the last opponent, paused),
updated per result: a wave costs the results it collects plus the free players it pairs, not a
recount of every game (`recompute` rebuilds the tallies from the games, for a corrected result).

- **Waves** (`wave`): results first (in board order), then the free players (not paused, not
  withdrawn, not in a game) are ordered by points, then rating, then seed, and each takes the
  next one down who was not their last opponent, nor they that one's: never the same opponent twice
  in a row. Whoever is left over waits for the next wave. Seat 0 (first move) to whoever has had
  it less often. No pairing while the director holds the tournament or after the end time; once
  the end time has passed and the last game has finished, the arena is finished.
- **Points**: a win 2, a draw 1, a loss 0; a player on a streak (the two games before were won)
  scores double: a win 4, a draw 2. A draw or a loss ends the streak.
- **Missed games**: a player who made no move and lost on time is paused (not paired again until
  they come back with PauseArenaPlay), instead of the other formats' withdrawal after two.
- **Standings**: points, then performance (the average over games played of the opponent's rating
  +500 for a win, -500 for a loss), then seed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from gateway.tournaments.model import Arena, Format, Game, Result, Round, State, Tally

ROUND = 0  # an arena game's round number (TournamentGame.round)
WIN, DRAW = 2, 1
STREAK = 2  # wins in a row before a game that double its points
PERFORMANCE_STEP = 500.0
# How far down the order a player looks for an opponent other than their last one: a bound on the
# work per player (only one or two are ever ruled out, so a few suffice).
LOOK_AHEAD = 8


@dataclass(frozen=True)
class Wave:
    state: State
    finished: tuple[Game, ...]  # games decided by this wave's results
    paired: tuple[Game, ...]  # games paired by this wave
    paused: tuple[str, ...]  # players paused for a missed game


def is_arena(state: State) -> bool:
    return state.config.format is Format.ARENA


def start(state: State) -> State:
    """A started arena: every entrant free, no game yet."""
    tallies = {e.player_id: Tally() for e in state.entrants}
    return replace(state, rounds=(Round(ROUND, ()),), arena=Arena(tallies))


def arena_of(state: State) -> Arena:
    if state.arena is None:
        raise ValueError("not an arena")
    return state.arena


def games(state: State) -> tuple[Game, ...]:
    return state.rounds[0].games if state.rounds else ()


def game(state: State, board: int) -> Game | None:
    played = games(state)
    return played[board - 1] if 1 <= board <= len(played) else None


def playing(state: State) -> list[Game]:
    """The games being played (their boards from the tallies: no scan of every game)."""
    boards = sorted({t.board for t in arena_of(state).tallies.values() if t.board})
    out = []
    for board in boards:
        g = game(state, board)
        if g is not None and g.result is None and not g.aborted:
            out.append(g)
    return out


# -- points ----------------------------------------------------------------------------------------


def _outcome(result: Result, seat: int) -> int:
    """1 win, 0 draw, -1 loss for a two-seat result."""
    other = 1 - seat
    if result.is_absent(seat) and not result.is_absent(other):
        return -1
    if result.is_absent(other) and not result.is_absent(seat):
        return 1
    mine, theirs = result.ranks[seat], result.ranks[other]
    return 1 if mine < theirs else (0 if mine == theirs else -1)


def game_points(outcome: int, streak_before: int) -> int:
    base = WIN if outcome > 0 else (DRAW if outcome == 0 else 0)
    return base * 2 if streak_before >= STREAK else base


def _apply(
    state: State, tallies: dict[str, Tally], points: dict[int, tuple[int, ...]], g: Game, result: Result
) -> None:
    scored = []
    for seat, pid in enumerate(g.seats):
        t = tallies[pid]
        opponent = g.seats[1 - seat]
        outcome = _outcome(result, seat)
        got = game_points(outcome, t.streak)
        scored.append(got)
        tallies[pid] = replace(
            t,
            points=t.points + got,
            streak=t.streak + 1 if outcome > 0 else 0,
            games=t.games + 1,
            wins=t.wins + (outcome > 0),
            draws=t.draws + (outcome == 0),
            losses=t.losses + (outcome < 0),
            rating_sum=t.rating_sum + state.entrant(opponent).rating + PERFORMANCE_STEP * outcome,
            firsts=t.firsts + (seat == 0),
            last=opponent,
            board=0 if t.board == g.board else t.board,
        )
    points[g.board] = tuple(scored)


def record(state: State, results: Mapping[int, Result]) -> tuple[State, list[Game], list[str]]:
    """Results by board, applied in board order; a board already decided is left as it is.
    Returns the state, the games decided and the players paused for missing theirs."""
    arena = arena_of(state)
    tallies = dict(arena.tallies)
    points = dict(arena.points)
    played = list(games(state))
    finished: list[Game] = []
    paused: list[str] = []
    for board in sorted(results):
        if not 1 <= board <= len(played):
            continue
        g = played[board - 1]
        result = results[board]
        if g.result is not None or g.aborted or len(result.ranks) != len(g.seats):
            continue
        g = replace(g, result=result)
        played[board - 1] = g
        _apply(state, tallies, points, g, result)
        finished.append(g)
        for seat, pid in enumerate(g.seats):
            if result.is_missed(seat) and not tallies[pid].paused:
                tallies[pid] = replace(tallies[pid], paused=True)
                paused.append(pid)
    if not finished:
        return state, [], []
    new = replace(state, rounds=(Round(ROUND, tuple(played)),), arena=replace(arena, tallies=tallies, points=points))
    return new, finished, paused


def recompute(state: State) -> State:
    """The tallies and points rebuilt from the games in board order (a player plays one game at a
    time, so board order is each player's own order): after a director corrects a result. Paused
    flags and games being played are kept."""
    arena = arena_of(state)
    tallies = {
        pid: Tally(paused=t.paused, board=t.board if (g := game(state, t.board)) and g.result is None else 0)
        for pid, t in arena.tallies.items()
    }
    points: dict[int, tuple[int, ...]] = {}
    for g in games(state):
        if g.result is not None:  # frees a seat only if this is the game it plays: a later one stays
            _apply(state, tallies, points, g, g.result)
    return replace(state, arena=replace(arena, tallies=tallies, points=points))


def correct(state: State, board: int, result: Result, note: str) -> State:
    """A director's result for an arena game (replacing a played one, or deciding one ended in play),
    the tallies and points recomputed from the games."""
    g = game(state, board)
    if g is None:
        raise ValueError(f"no arena game {board}")
    if len(result.ranks) != len(g.seats):
        raise ValueError("one rank per seat")
    played = list(games(state))
    played[board - 1] = replace(g, result=result, aborted=False, note=note)
    arena = arena_of(state)
    tallies = dict(arena.tallies)
    for pid in g.seats:
        if tallies[pid].board == board:
            tallies[pid] = replace(tallies[pid], board=0)
    state = replace(state, rounds=(Round(ROUND, tuple(played)),), arena=replace(arena, tallies=tallies))
    return recompute(state)


# -- pairing ---------------------------------------------------------------------------------------


def pairable(state: State) -> list[str]:
    """Free players who may be paired: not paused, not withdrawn, not in a game."""
    withdrawn = set(state.withdrawn)
    return [pid for pid, t in arena_of(state).tallies.items() if not t.board and not t.paused and pid not in withdrawn]


def pair(state: State, free: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs (seat 0, seat 1) of the free players: by points, rating, seed; never last opponents."""
    tallies = arena_of(state).tallies
    order = sorted(free, key=lambda p: (-tallies[p].points, -state.entrant(p).rating, state.seed(p)))
    taken = [False] * len(order)
    out: list[tuple[str, str]] = []
    for i, p in enumerate(order):
        if taken[i]:
            continue
        looked = 0
        for j in range(i + 1, len(order)):
            if taken[j]:
                continue
            q = order[j]
            if tallies[p].last != q and tallies[q].last != p:
                taken[i] = taken[j] = True
                out.append(_seated(tallies[p], tallies[q], p, q))
                break
            looked += 1
            if looked >= LOOK_AHEAD:
                break
    return out


def _seated(tp: Tally, tq: Tally, p: str, q: str) -> tuple[str, str]:
    """Seat 0 to whoever has had it less often (as a share of games); p (placed higher) on a tie."""
    if tq.firsts * 2 - tq.games < tp.firsts * 2 - tp.games:
        return q, p
    return p, q


def wave(state: State, results: Mapping[int, Result], *, now_ms: int, ends_ms: int, hold: bool = False) -> Wave:
    """Collect `results` (by board), pair the free players (unless held or past the end), and finish
    the arena once the end has passed and no game is being played. Deterministic."""
    if state.finished:
        return Wave(state, (), (), ())
    state, finished, paused = record(state, results)
    paired: list[Game] = []
    if now_ms < ends_ms and not hold:
        pairs = pair(state, pairable(state))
        if pairs:
            arena = arena_of(state)
            tallies = dict(arena.tallies)
            played = list(games(state))
            for seats in pairs:
                g = Game(len(played) + 1, seats)
                played.append(g)
                paired.append(g)
                for pid in seats:
                    tallies[pid] = replace(tallies[pid], board=g.board)
            state = replace(state, rounds=(Round(ROUND, tuple(played)),), arena=replace(arena, tallies=tallies))
    if now_ms >= ends_ms and not any(t.board for t in arena_of(state).tallies.values()):
        state = replace(state, finished=True)
    return Wave(state, tuple(finished), tuple(paired), tuple(paused))


def set_paused(state: State, player_id: str, paused: bool) -> State:
    arena = arena_of(state)
    t = arena.tallies[player_id]
    if t.paused == paused:
        return state
    tallies = dict(arena.tallies)
    tallies[player_id] = replace(t, paused=paused)
    return replace(state, arena=replace(arena, tallies=tallies))


def finish(state: State) -> State:
    """Ended now (a director's terminate): games in play are left undecided (not counted)."""
    arena = arena_of(state)
    tallies = {pid: replace(t, board=0) for pid, t in arena.tallies.items()}
    return replace(state, finished=True, arena=replace(arena, tallies=tallies))


def with_standings_time(state: State, at_ms: int) -> State:
    return replace(state, arena=replace(arena_of(state), standings_ms=at_ms))


# -- standings -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Standing:
    rank: int
    player_id: str
    seed: int  # 1-based
    tally: Tally
    withdrawn: bool


def standings(state: State, limit: int = 0) -> list[Standing]:
    """Best first (all of them, or the first `limit`): points, performance, seed; a rank is shared
    only when points and performance are equal."""
    tallies = arena_of(state).tallies
    withdrawn = set(state.withdrawn)

    def key(p: str) -> tuple[float, float]:
        return (-tallies[p].points, -round(tallies[p].performance, 6))

    ids = sorted(tallies, key=lambda p: (key(p), state.seed(p)))
    out: list[Standing] = []
    previous: tuple[float, float] | None = None
    rank = 0
    for position, p in enumerate(ids, start=1):
        k = key(p)
        if k != previous:
            rank, previous = position, k
        out.append(Standing(rank, p, state.seed(p) + 1, tallies[p], p in withdrawn))
        if limit and len(out) >= limit:
            break
    return out


def points_of(state: State, board: int) -> Sequence[int]:
    """Arena points per seat of a decided game (empty while it is played)."""
    return arena_of(state).points.get(board, ())
