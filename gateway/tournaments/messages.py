"""Tournament values as public API messages."""

from __future__ import annotations

from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2, tournaments_pb2

from gateway.timecontrol import time_control_of
from gateway.tournaments import arena, engine
from gateway.tournaments.model import Format, Game, Round, State, game_points
from gateway.tournaments.store import Loaded

FORMATS: dict[Format, int] = {
    Format.SWISS: tournaments_pb2.TOURNAMENT_FORMAT_SWISS,
    Format.ROUND_ROBIN: tournaments_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN,
    Format.KNOCKOUT: tournaments_pb2.TOURNAMENT_FORMAT_KNOCKOUT,
    Format.TABLES: tournaments_pb2.TOURNAMENT_FORMAT_TABLES,
    Format.ARENA: tournaments_pb2.TOURNAMENT_FORMAT_ARENA,
}
FORMAT_OF: dict[int, Format] = {v: k for k, v in FORMATS.items()}
STATES: dict[str, int] = {
    "registering": tournaments_pb2.TOURNAMENT_STATE_REGISTERING,
    "running": tournaments_pb2.TOURNAMENT_STATE_RUNNING,
    "finished": tournaments_pb2.TOURNAMENT_STATE_FINISHED,
    "cancelled": tournaments_pb2.TOURNAMENT_STATE_CANCELLED,
}
STATE_NAME: dict[int, str] = {v: k for k, v in STATES.items()}


def player(entry: tuple[str, str, bool]) -> play_pb2.Player:
    return play_pb2.Player(player_id=entry[0], username=entry[1], guest=entry[2])


def tournament(loaded: Loaded, *, director: bool = False) -> tournaments_pb2.Tournament:
    """`director`: the caller may direct it (sees the invitation code)."""
    spec = loaded.spec
    out = tournaments_pb2.Tournament(
        tournament_id=spec.tournament_id,
        name=spec.name,
        game=spec.game,
        options=games_pb2.GameOptions.FromString(spec.options),
        format=FORMATS[spec.format],  # type: ignore[arg-type]
        rounds=spec.rounds,
        table_size=spec.table_size if spec.format is Format.TABLES else 0,
        capacity=spec.capacity,
        organiser=player(spec.organiser),
        state=STATES.get(loaded.status, 0),  # type: ignore[arg-type]
        players=[player(p) for p in loaded.players],
        rated=spec.rated,
        min_players=spec.min_players,
        late_join_until_round=spec.late_join_until_round,
        manual_rounds=spec.manual_rounds,
        can_direct=director,
        invitation_code=spec.invitation_code if director else "",
        player_count=len(loaded.players),
    )
    out.entry.min_rating = spec.min_rating
    out.entry.min_rated_games = spec.min_rated_games
    out.entry.invitation_required = bool(spec.invitation_code)
    if spec.reg_opens_ms:
        out.registration_opens_at.FromMilliseconds(spec.reg_opens_ms)
    if spec.reg_closes_ms:
        out.registration_closes_at.FromMilliseconds(spec.reg_closes_ms)
    for at in spec.round_times_ms:
        out.round_start_times.add().FromMilliseconds(at)
    out.time_control.CopyFrom(time_control_of(spec.per_move_ms))
    out.created_at.FromMilliseconds(spec.created_ms)
    if spec.starts_at_ms:
        out.starts_at.FromMilliseconds(spec.starts_at_ms)
    if loaded.started_ms:
        out.started_at.FromMilliseconds(loaded.started_ms)
    if loaded.finished_ms:
        out.finished_at.FromMilliseconds(loaded.finished_ms)
    if spec.arena_ms:
        out.arena_duration.FromMilliseconds(spec.arena_ms)
        if loaded.started_ms:
            out.ends_at.FromMilliseconds(loaded.started_ms + spec.arena_ms)
    state = loaded.state
    if state is not None:
        out.rounds = engine.total_rounds(state)
        out.current_round = 0 if state.arena is not None else len(state.rounds)
        out.paused = state.paused
        out.terminated = state.terminated
        nxt = len(state.rounds) + 1
        at = spec.schedule.time_of(nxt)
        if at and not state.finished and nxt <= out.rounds and state.released < nxt and not spec.manual_rounds:
            out.next_round_at.FromMilliseconds(at)
    return out


def game(tid: str, state: State, number: int, g: Game) -> tournaments_pb2.TournamentGame:
    out = tournaments_pb2.TournamentGame(
        board=g.board,
        decider=g.decider,
        players=[player((p, state.entrant(p).username, state.entrant(p).guest)) for p in g.seats],
        round=number,
        correction_reason=g.note,
    )
    if g.bye:
        out.state = tournaments_pb2.TOURNAMENT_GAME_STATE_BYE
        out.points.append(state.config.bye_points)
        return out
    result = g.result
    if g.aborted:
        out.game_id = engine.game_id(tid, number, g)
        out.state = tournaments_pb2.TOURNAMENT_GAME_STATE_ABORTED
        return out
    if g.note:
        out.game_id = engine.game_id(tid, number, g)
        out.state = tournaments_pb2.TOURNAMENT_GAME_STATE_CORRECTED
    elif result is not None and result.unplayed:
        out.state = tournaments_pb2.TOURNAMENT_GAME_STATE_FORFEITED
    else:
        out.game_id = engine.game_id(tid, number, g)
        out.state = (
            tournaments_pb2.TOURNAMENT_GAME_STATE_FINISHED
            if result is not None
            else tournaments_pb2.TOURNAMENT_GAME_STATE_PLAYING
        )
    if result is not None:
        out.ranks.extend(result.ranks)
        out.scores.extend(result.scores)
        out.missed.extend(result.is_missed(s) for s in range(len(g.seats)))
        out.absent.extend(result.is_absent(s) for s in range(len(g.seats)))
        if state.arena is not None:
            out.points.extend(float(x) for x in arena.points_of(state, g.board))
        else:
            out.points.extend(game_points(g, s, state.config.bye_points) for s in range(len(g.seats)))
    return out


def round_message(tid: str, state: State, rnd: Round) -> tournaments_pb2.TournamentRound:
    finished = rnd.done and (rnd is not state.current or engine.round_done(state))
    return tournaments_pb2.TournamentRound(
        number=rnd.number,
        games=[game(tid, state, rnd.number, g) for g in rnd.games],
        finished=finished,
    )


def standings(state: State, limit: int = 0) -> list[tournaments_pb2.Standing]:
    """`limit`: only the first so many (an arena's live standings); 0 = all."""
    if state.arena is not None:
        return arena_standings(state, limit)
    out: list[tournaments_pb2.Standing] = []
    banned = frozenset(state.banned)
    for row in engine.standings(state):
        entrant = state.entrant(row.player_id)
        out.append(
            tournaments_pb2.Standing(
                rank=row.rank,
                player=player((row.player_id, row.username, entrant.guest)),
                seed=row.seed,
                rating=entrant.rating,
                points=row.points,
                buchholz=row.buchholz,
                sonneborn_berger=row.sonneborn_berger,
                score_total=row.score_total,
                games=row.games,
                wins=row.wins,
                draws=row.draws,
                losses=row.losses,
                byes=row.byes,
                withdrawn=row.withdrawn,
                reached_round=row.reached,
                banned=row.player_id in banned,
            )
        )
    return out


def arena_standings(state: State, limit: int = 0) -> list[tournaments_pb2.Standing]:
    out: list[tournaments_pb2.Standing] = []
    for row in arena.standings(state, limit):
        entrant = state.entrant(row.player_id)
        t = row.tally
        out.append(
            tournaments_pb2.Standing(
                rank=row.rank,
                player=player((row.player_id, entrant.username, entrant.guest)),
                seed=row.seed,
                rating=entrant.rating,
                points=float(t.points),
                games=t.games,
                wins=t.wins,
                draws=t.draws,
                losses=t.losses,
                withdrawn=row.withdrawn,
                streak=t.streak,
                paused=t.paused,
                performance=round(t.performance, 1),
                banned=row.player_id in state.banned,
            )
        )
    return out


def rounds_completed(state: State) -> int:
    if state.arena is not None:
        return 0  # an arena has no rounds
    if state.finished:
        return len(state.rounds)
    return len(state.rounds) - (0 if engine.round_done(state) else 1)
