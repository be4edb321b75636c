"""The tournament state machine, pure: start, pair the next round, record results, withdraw, and
the standings. Every step is a function from a State to a new State, deterministic, so a service
that retries a step (after a crash, or on two replicas at once) computes the same rounds and games.

Forfeits:
- a player who does not move in time loses that game (the game's own clock rule; the result comes
  in like any other, with the seat marked `missed` when the player made no move at all);
- `Config.misses_to_withdraw` (2) missed games in a row withdraw the player (byes and forfeits
  without a game neither count nor break the run);
- a withdrawn player is paired no more (Swiss, tables); their scheduled games (round robin) and
  matches (knockout) are forfeited at once without a game: the opponent scores a win, they score 0.
  A game already running when a player withdraws is played out (or resigned) as usual.

Standings (`standings`), best first, each with a competition rank shared only on full ties:
- Swiss: points, Buchholz (sum of the final points of every opponent met, forfeits included, byes
  not), Sonneborn-Berger (sum over those games of points scored times the opponent's points), seed;
- round robin: points, Sonneborn-Berger, Buchholz, seed;
- tables: points (finishing places), total game score, seed;
- knockout: the round reached (the winner above the finalist), then seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gateway.tournaments import arena
from gateway.tournaments.model import (
    Config,
    Entrant,
    Format,
    Game,
    Result,
    Round,
    State,
    game_points,
)
from gateway.tournaments.pairing import (
    SwissPlayer,
    knockout_first_round,
    knockout_rounds,
    pair_swiss,
    pair_tables,
    round_robin_round,
    round_robin_rounds,
)


class TournamentError(ValueError):
    """A step that does not apply to this state (a machine reason in `reason`)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def seed_order(entrants: Sequence[Entrant]) -> tuple[Entrant, ...]:
    """Rating high to low; equal ratings keep registration order."""
    return tuple(sorted(entrants, key=lambda e: -e.rating))


def min_players(config: Config) -> int:
    return 3 if config.format is Format.TABLES else 2


def start(config: Config, entrants: Sequence[Entrant]) -> State:
    """A started tournament (no round paired yet). Entrants in registration order."""
    ids = [e.player_id for e in entrants]
    if len(set(ids)) != len(ids):
        raise TournamentError("DUPLICATE_ENTRANT", "a player is registered twice")
    if len(entrants) < min_players(config):
        raise TournamentError("TOO_FEW_PLAYERS", f"at least {min_players(config)} players are needed")
    state = State(config, seed_order(entrants))
    return arena.start(state) if config.format is Format.ARENA else state


def total_rounds(state: State) -> int:
    n = len(state.entrants)
    fmt = state.config.format
    if fmt is Format.ROUND_ROBIN:
        return round_robin_rounds(n)
    if fmt is Format.KNOCKOUT:
        return knockout_rounds(n)
    return state.config.rounds


# -- results ---------------------------------------------------------------------------------------


def _forfeit(seats: Sequence[str], state: State) -> Result:
    """The result of a game that a withdrawn player cannot play: present seats first."""
    absent = tuple(state.is_withdrawn(p) for p in seats)
    ranks = tuple(2 if a else 1 for a in absent)
    return Result(ranks=ranks, absent=absent)


def _new_game(state: State, board: int, seats: tuple[str, ...], decider: int = 0) -> Game:
    if any(state.is_withdrawn(p) for p in seats):
        return Game(board, seats, decider, result=_forfeit(seats, state))
    return Game(board, seats, decider)


def miss_streak(state: State, player_id: str) -> int:
    """Games missed in a row up to now (byes and forfeits without a game skipped)."""
    streak = 0
    for _, game in state.all_games():
        if game.bye or game.result is None or player_id not in game.seats:
            continue
        if game.result.unplayed:
            continue
        streak = streak + 1 if game.result.is_missed(game.seat_of(player_id)) else 0
    return streak


def record(state: State, round_number: int, board: int, decider: int, result: Result) -> State:
    """Record a game's result. Recording a game that already has one changes nothing."""
    if not 1 <= round_number <= len(state.rounds):
        raise TournamentError("NO_SUCH_ROUND", f"no round {round_number}")
    rnd = state.rounds[round_number - 1]
    game = rnd.game(board, decider)
    if game is None:
        raise TournamentError("NO_SUCH_GAME", f"no game on board {board} (decider {decider}) in round {round_number}")
    if game.result is not None:
        return state
    if len(result.ranks) != len(game.seats):
        raise TournamentError("BAD_RESULT", "one rank per seat")
    games = [g if g is not game else replace(g, result=result) for g in rnd.games]
    state = state.with_round(replace(rnd, games=tuple(games)))
    # Missed games in a row withdraw a player.
    for seat, player_id in enumerate(game.seats):
        if result.is_missed(seat) and not state.is_withdrawn(player_id):
            if miss_streak(state, player_id) >= state.config.misses_to_withdraw:
                state = replace(state, withdrawn=(*state.withdrawn, player_id))
    if state.config.format is Format.KNOCKOUT:
        state = _knockout_follow_up(state, round_number, board)
    return state


def withdraw(state: State, player_id: str) -> State:
    """The player leaves: not paired again; their games in later rounds (and deciders not yet
    paired) are forfeited. Games of the current round, already paired, are played out or resigned
    by the service. Idempotent."""
    if player_id not in {e.player_id for e in state.entrants}:
        raise TournamentError("NOT_REGISTERED", "the player is not in this tournament")
    if state.is_withdrawn(player_id):
        return state
    return replace(state, withdrawn=(*state.withdrawn, player_id))


# -- knockout matches ------------------------------------------------------------------------------


def match_winner(state: State, rnd: Round, board: int) -> str | None:
    """The winner of a knockout board once decided, else None."""
    games = sorted((g for g in rnd.games if g.board == board), key=lambda g: g.decider)
    if not games:
        return None
    last = games[-1]
    if last.bye:
        return last.seats[0]
    if last.result is None:
        return None
    ranks = last.result.ranks
    if ranks[0] != ranks[1]:
        return last.seats[0] if ranks[0] < ranks[1] else last.seats[1]
    if last.result.unplayed:  # both absent: the higher seed goes on (and forfeits next round)
        return min(last.seats, key=state.seed)
    if last.decider >= state.config.max_deciders:
        return min(last.seats, key=state.seed)
    return None


def _knockout_follow_up(state: State, round_number: int, board: int) -> State:
    rnd = state.rounds[round_number - 1]
    games = sorted((g for g in rnd.games if g.board == board), key=lambda g: g.decider)
    last = games[-1]
    if last.result is None or match_winner(state, rnd, board) is not None:
        return state
    # A drawn game: a decider with the seats swapped.
    decider = _new_game(state, board, tuple(reversed(last.seats)), last.decider + 1)
    return state.with_round(replace(rnd, games=(*rnd.games, decider)))


# -- pairing the next round ------------------------------------------------------------------------


def round_done(state: State) -> bool:
    rnd = state.current
    if rnd is None:
        return True
    if not rnd.done:
        return False
    if state.config.format is Format.KNOCKOUT:
        boards = {g.board for g in rnd.games}
        return all(match_winner(state, rnd, b) is not None for b in boards)
    return True


def next_round(state: State) -> State:
    """Pair the next round once the current one is done, or mark the tournament finished.
    Calling it while a round is still running changes nothing."""
    if state.finished or not round_done(state) or state.config.format is Format.ARENA:
        return state  # an arena pairs in waves (arena.py) and ends at its time
    number = len(state.rounds) + 1
    fmt = state.config.format
    if number > total_rounds(state):
        return replace(state, finished=True)
    if fmt is Format.KNOCKOUT:
        games = _knockout_games(state, number)
    elif fmt is Format.ROUND_ROBIN:
        games = _round_robin_games(state, number)
    elif fmt is Format.SWISS:
        games = _swiss_games(state, number)
    else:
        games = _table_games(state, number)
    if games is None:
        return replace(state, finished=True)
    return state.with_round(Round(number, tuple(games)))


def _knockout_games(state: State, number: int) -> list[Game] | None:
    if number == 1:
        boards = knockout_first_round([e.player_id for e in state.entrants])
    else:
        prev = state.rounds[-1]
        winners = [match_winner(state, prev, b) for b in sorted({g.board for g in prev.games})]
        if len(winners) < 2:
            return None
        boards = [tuple(w for w in winners[i : i + 2] if w is not None) for i in range(0, len(winners), 2)]
    games: list[Game] = []
    for board, seats in enumerate(boards, start=1):
        if len(seats) == 1:
            games.append(Game(board, seats, bye=True))
        else:
            games.append(_new_game(state, board, seats))
    return games


def _round_robin_games(state: State, number: int) -> list[Game] | None:
    pairs, bye = round_robin_round([e.player_id for e in state.entrants], number)
    games = [_new_game(state, board, pair) for board, pair in enumerate(pairs, start=1)]
    if bye is not None:
        games.append(Game(len(games) + 1, (bye,), bye=True))
    return games


def points_table(state: State) -> dict[str, float]:
    points = {e.player_id: 0.0 for e in state.entrants}
    for _, game in state.all_games():
        for seat, player_id in enumerate(game.seats):
            if game.bye or game.result is not None:
                points[player_id] += game_points(game, seat, state.config.bye_points)
    return points


def _swiss_games(state: State, number: int) -> list[Game] | None:
    active = state.active()
    if len(active) < 2:
        return None
    points = points_table(state)
    opponents: dict[str, set[str]] = {p: set() for p in active}
    byes: dict[str, int] = dict.fromkeys(active, 0)
    seats: dict[str, list[int]] = {p: [] for p in active}
    for _, game in state.all_games():
        if game.bye:
            if game.seats[0] in byes:
                byes[game.seats[0]] += 1
            continue
        played = game.result is None or not game.result.unplayed
        for seat, player_id in enumerate(game.seats):
            if player_id not in opponents:
                continue
            opponents[player_id].update(p for p in game.seats if p != player_id)
            if played:
                seats[player_id].append(seat)
    players = [
        SwissPlayer(p, points[p], state.seed(p), frozenset(opponents[p]), byes[p], tuple(seats[p])) for p in active
    ]
    paired = pair_swiss(players, number)
    games = [Game(board, pair) for board, pair in enumerate(paired.pairs, start=1)]
    if paired.bye is not None:
        games.append(Game(len(games) + 1, (paired.bye,), bye=True))
    return games


def _table_games(state: State, number: int) -> list[Game] | None:
    active = state.active()
    if len(active) < 2:
        return None
    points = points_table(state)
    totals = score_totals(state)
    order = sorted(active, key=lambda p: (-points[p], -totals[p], state.seed(p)))
    meetings: dict[frozenset[str], int] = {}
    first_seat: dict[str, int] = dict.fromkeys(active, 0)
    for _, game in state.all_games():
        if game.bye:
            continue
        if game.seats[0] in first_seat:
            first_seat[game.seats[0]] += 1
        for i, a in enumerate(game.seats):
            for b in game.seats[i + 1 :]:
                key = frozenset((a, b))
                meetings[key] = meetings.get(key, 0) + 1

    def met(a: str, b: str) -> int:
        return meetings.get(frozenset((a, b)), 0)

    tables = pair_tables(order, state.config.table_size, met, hi=state.config.largest_table)
    place = {p: i for i, p in enumerate(order)}
    games: list[Game] = []
    for board, table in enumerate(tables, start=1):
        # Seat 0 (first to act) rotates: whoever has had it least, then standings.
        seated = tuple(sorted(table, key=lambda p: (first_seat[p], place[p])))
        games.append(Game(board, seated))
    return games


# -- standings -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Standing:
    rank: int
    player_id: str
    username: str
    seed: int  # 1-based
    points: float
    buchholz: float
    sonneborn_berger: float
    score_total: int
    games: int
    wins: int
    draws: int
    losses: int
    byes: int
    withdrawn: bool
    # Knockout: the last round the player was in (the winner: total rounds + 1).
    reached: int


def score_totals(state: State) -> dict[str, int]:
    totals = {e.player_id: 0 for e in state.entrants}
    for _, game in state.all_games():
        if game.result is not None and not game.bye:
            for seat, player_id in enumerate(game.seats):
                totals[player_id] += game.result.score(seat)
    return totals


def standings(state: State) -> list[Standing]:
    cfg = state.config
    points = points_table(state)
    totals = score_totals(state)
    buchholz = dict.fromkeys(points, 0.0)
    sb = dict.fromkeys(points, 0.0)
    played = dict.fromkeys(points, 0)
    wins = dict.fromkeys(points, 0)
    draws = dict.fromkeys(points, 0)
    losses = dict.fromkeys(points, 0)
    byes = dict.fromkeys(points, 0)
    reached = dict.fromkeys(points, 0)
    for number, game in state.all_games():
        for p in game.seats:
            reached[p] = max(reached[p], number)
        if game.bye:
            byes[game.seats[0]] += 1
            continue
        if game.result is None:
            continue
        for seat, player_id in enumerate(game.seats):
            got = game_points(game, seat, cfg.bye_points)
            played[player_id] += 1
            if got == 1.0:
                wins[player_id] += 1
            elif got == 0.0:
                losses[player_id] += 1
            else:
                draws[player_id] += 1
            for other_seat, other in enumerate(game.seats):
                if other_seat == seat:
                    continue
                buchholz[player_id] += points[other]
                # Points scored against this opponent in this game.
                pair = _pair_points(game.result, seat, other_seat)
                sb[player_id] += pair * points[other]
    if cfg.format is Format.KNOCKOUT and state.finished and state.rounds:
        final = state.rounds[-1]
        winner = match_winner(state, final, min(g.board for g in final.games))
        if winner is not None:
            reached[winner] = len(state.rounds) + 1

    def key(p: str) -> tuple[float, ...]:
        if cfg.format is Format.SWISS:
            return (-points[p], -buchholz[p], -sb[p])
        if cfg.format is Format.ROUND_ROBIN:
            return (-points[p], -sb[p], -buchholz[p])
        if cfg.format is Format.TABLES:
            return (-points[p], -totals[p])
        return (-reached[p],)

    ids = sorted(points, key=lambda p: (key(p), state.seed(p)))
    out: list[Standing] = []
    previous: tuple[float, ...] | None = None
    rank = 0
    for position, p in enumerate(ids, start=1):
        k = key(p)
        if k != previous:
            rank = position
            previous = k
        entrant = state.entrant(p)
        out.append(
            Standing(
                rank=rank,
                player_id=p,
                username=entrant.username,
                seed=state.seed(p) + 1,
                points=points[p],
                buchholz=buchholz[p],
                sonneborn_berger=sb[p],
                score_total=totals[p],
                games=played[p],
                wins=wins[p],
                draws=draws[p],
                losses=losses[p],
                byes=byes[p],
                withdrawn=state.is_withdrawn(p),
                reached=reached[p],
            )
        )
    return out


def _pair_points(result: Result, seat: int, other: int) -> float:
    if result.is_absent(seat):
        return 0.0
    if result.is_absent(other):
        return 1.0
    if result.ranks[seat] < result.ranks[other]:
        return 1.0
    if result.ranks[seat] == result.ranks[other]:
        return 0.5
    return 0.0


def game_id(tournament_id: str, round_number: int, game: Game) -> str:
    """The deterministic id of a tournament game: a retried start creates the same game."""
    suffix = f"d{game.decider}" if game.decider else ""
    return f"{tournament_id}-r{round_number}b{game.board}{suffix}"


# -- directors -------------------------------------------------------------------------------------


def _game_at(state: State, round_number: int, board: int, decider: int) -> tuple[Round, Game]:
    if not 1 <= round_number <= len(state.rounds):
        raise TournamentError("NO_SUCH_ROUND", f"no round {round_number}")
    rnd = state.rounds[round_number - 1]
    game = rnd.game(board, decider)
    if game is None:
        raise TournamentError("NO_SUCH_GAME", f"no game on board {board} (decider {decider}) in round {round_number}")
    return rnd, game


def correct(state: State, round_number: int, board: int, decider: int, ranks: Sequence[int], reason: str) -> State:
    """A director decides a game: `ranks` (1 = best, per seat) replace the played result, the
    standings follow from it. The same ranks again change nothing. A knockout game can be corrected
    while its match is the last thing decided (its round current, no decider after it): a later
    round was paired from the old winner."""
    if state.config.format is Format.ARENA:
        return _correct_arena(state, round_number, board, ranks, reason)
    rnd, game = _game_at(state, round_number, board, decider)
    if game.bye:
        raise TournamentError("GAME_NOT_CORRECTABLE", "a bye has no result to correct")
    n = len(game.seats)
    if len(ranks) != n or any(not 1 <= r <= n for r in ranks):
        raise TournamentError("BAD_CORRECTION", f"give one rank (1..{n}) per seat")
    if state.config.format is Format.KNOCKOUT:
        last = max(g.decider for g in rnd.games if g.board == board)
        if rnd is not state.current or decider != last:
            raise TournamentError("GAME_NOT_CORRECTABLE", "a knockout result is corrected before the match moves on")
    ranks = tuple(int(r) for r in ranks)
    if game.note and game.result is not None and game.result.ranks == ranks:
        return state
    scores = game.result.scores if game.result is not None and not game.result.unplayed else ()
    fixed = replace(game, result=Result(ranks=ranks, scores=scores), aborted=False, note=reason)
    rounds = list(state.rounds)  # any round, not only the current one (with_round's)
    rounds[round_number - 1] = replace(rnd, games=tuple(fixed if g is game else g for g in rnd.games))
    state = replace(state, rounds=tuple(rounds))
    if state.config.format is Format.KNOCKOUT:
        state = _knockout_follow_up(state, round_number, board)
    return state


def _correct_arena(state: State, round_number: int, board: int, ranks: Sequence[int], reason: str) -> State:
    """An arena's games are round 0, boards in the order they were paired (arena.py)."""
    game = arena.game(state, board) if round_number == arena.ROUND else None
    if game is None:
        raise TournamentError("NO_SUCH_GAME", f"no arena game {board} in round {round_number} (arena: round 0)")
    if len(ranks) != 2 or any(not 1 <= r <= 2 for r in ranks):
        raise TournamentError("BAD_CORRECTION", "give one rank (1..2) per seat")
    fixed = tuple(int(r) for r in ranks)
    if game.note and game.result is not None and game.result.ranks == fixed:
        return state
    scores = game.result.scores if game.result is not None else ()
    return arena.correct(state, board, Result(ranks=fixed, scores=scores), reason)


def terminate(state: State) -> State:
    """End now: the current round's undecided games are aborted (not counted), no more rounds."""
    rnd = state.current
    if rnd is not None and not rnd.done:
        games = tuple(g if g.done else replace(g, aborted=True) for g in rnd.games)
        state = state.with_round(replace(rnd, games=games))
    return replace(state, finished=True, terminated=True, paused=False)


def ban(state: State, player_id: str) -> State:
    """Withdraw the player for good (idempotent)."""
    state = withdraw(state, player_id)
    if player_id in state.banned:
        return state
    return replace(state, banned=(*state.banned, player_id))


def late_join(state: State, entrant: Entrant, until_round: int) -> State:
    """A Swiss player joining after the start, in time for rounds up to `until_round`: the lowest
    seed, no points, paired from the next round on. Already in: unchanged."""
    if any(e.player_id == entrant.player_id for e in state.entrants):
        return state
    if state.config.format is not Format.SWISS or state.finished or len(state.rounds) >= until_round:
        raise TournamentError("NOT_REGISTERING", "registration has closed")
    return replace(state, entrants=(*state.entrants, entrant), _index={})


@dataclass(frozen=True)
class Schedule:
    """When rounds may start: planned start times of rounds 2, 3, ... (ms since the epoch) and
    whether a director starts each one."""

    round_times_ms: tuple[int, ...] = ()
    manual: bool = False

    def time_of(self, number: int) -> int:
        """The planned start of round `number` (0: none)."""
        index = number - 2
        return self.round_times_ms[index] if 0 <= index < len(self.round_times_ms) else 0


def waiting_round(state: State, schedule: Schedule, now_ms: int) -> tuple[int, int] | None:
    """The next round when it must wait to be paired (the round before is done): its number and
    planned start (0 = until a director starts or resumes it). None when it may be paired now,
    or there is none to wait for."""
    if state.finished or not state.rounds or not round_done(state):
        return None
    number = len(state.rounds) + 1
    if number > total_rounds(state) or state.released >= number:
        return None
    if state.paused or schedule.manual:
        return number, 0
    at = schedule.time_of(number)
    if at > now_ms:
        return number, at
    return None


def release(state: State) -> State:
    """A director starts the next round now (and ends a pause): ROUND_IN_PROGRESS while the
    current round is being played, NO_NEXT_ROUND after the last."""
    if state.finished:
        raise TournamentError("NO_NEXT_ROUND", "every round has been played")
    if not round_done(state):
        raise TournamentError("ROUND_IN_PROGRESS", "games of the current round are still being played")
    number = len(state.rounds) + 1
    if number > total_rounds(state):
        raise TournamentError("NO_NEXT_ROUND", "every round has been played")
    return replace(state, released=max(state.released, number), paused=False)
