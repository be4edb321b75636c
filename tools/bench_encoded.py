"""What a move's messages cost the rules service, joined from encoded parts (services/host/encoded.py,
kit/wire.py) against built with the generated classes and encoded by protobuf, in one process.

    .venv/bin/python -m tools.bench_encoded [--moves 200000] [--rounds 5]

Per Connect Four move the service sends: the event (kept in Redis), the status (kept beside each
event), the ApplyMoveResponse (kept under the request id and answered, with the clock's fields), the
GameEventBatch (the wake-up to watchers), the RecordedAction (the record) and the stream's
ApplyMovesResponse around the answer. Both ways make the same bytes (tests/services/host/
test_encoded.py); this prints µs a move for each, round by round (alternated), and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time

from tafel.games.v1 import games_pb2
from tafel.rules.v1 import rules_pb2

from services.host import encoded

GAME_ID = "g-0123456789abcdef"


def move() -> games_pb2.GameMove:
    made = games_pb2.GameMove()
    made.connect4.column = 3
    return made


def event(version: int) -> games_pb2.GameEvent:
    made = games_pb2.GameEvent(event_id=f"{version}-1", version=version)
    dropped = made.connect4.disc_dropped
    dropped.seat, dropped.column, dropped.row = version % 2, 3, 2
    return made


def joined(moves: int) -> float:
    """The service's way: each part encoded once, the messages around them joined from bytes."""
    played = move()
    started = time.perf_counter()
    for version in range(1, moves + 1):
        now_ns = 1_765_000_000_000_000_000 + version
        due = now_ns // 1_000_000 + 30_000
        event_bytes = event(version).SerializeToString()
        status = encoded.status(version, [version % 2], None)
        response, wake_up = encoded.response_and_wake_up(GAME_ID, version, [event_bytes], status)
        stamp = (due, encoded.deadline_field(due))
        record = encoded.recorded_action(
            version % 2, version, now_ns, encoded.recorded_move(played.SerializeToString(deterministic=True))
        )
        answer = encoded.with_clock(response, due, stamp)
        encoded.applied_answer(version, answer)
        assert record and wake_up
    return time.perf_counter() - started


def built(moves: int) -> float:
    """The generated classes' way: every message built around copies of its parts and encoded."""
    played = move()
    started = time.perf_counter()
    for version in range(1, moves + 1):
        now_ns = 1_765_000_000_000_000_000 + version
        due = now_ns // 1_000_000 + 30_000
        made = event(version)
        event_bytes = made.SerializeToString()
        status = games_pb2.GameStatus(version=version, to_act=[version % 2])
        status_bytes = status.SerializeToString()
        response = rules_pb2.ApplyMoveResponse(version=version, events=[made], status=status, clock_armed=True)
        response.turn_deadline.FromMilliseconds(due)
        answer = response.SerializeToString()
        wake_up = games_pb2.GameEventBatch(game_id=GAME_ID, events=[made], status=status).SerializeToString()
        record = games_pb2.RecordedAction(seat=version % 2, version=version, move=played)
        record.at.FromNanoseconds(now_ns)
        record_bytes = record.SerializeToString()
        rules_pb2.ApplyMovesResponse(correlation_id=version, applied=response).SerializeToString()
        assert event_bytes and status_bytes and answer and wake_up and record_bytes
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--moves", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    joined(1_000), built(1_000)  # warm up
    ratios = []
    for round_ in range(1, args.rounds + 1):
        a = joined(args.moves) / args.moves * 1e6
        b = built(args.moves) / args.moves * 1e6
        ratios.append(b / a)
        print(f"round {round_}: joined {a:.2f} µs a move, built {b:.2f} µs a move, built/joined {b / a:.2f}")
    print(f"median built/joined: {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
