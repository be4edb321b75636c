"""tools/bench_calls.py's census: calls counted per anchor call, this repository's own apart."""

from __future__ import annotations

import cProfile
from pathlib import Path

from tools.bench_calls import census


def _twice() -> None:
    pass


def _move() -> None:
    _twice()
    _twice()
    len("move")


def test_census_counts_calls_per_anchor_call(tmp_path: Path) -> None:
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(10):
        _move()
    profile.disable()
    dump = tmp_path / "one.prof"
    profile.dump_stats(str(dump))

    found = census(dump, ("tests/test_bench_calls.py", "_move"))

    assert found.moves == 10
    per_move = {name: calls / found.moves for calls, name in found.rows}
    assert [value for name, value in per_move.items() if name.endswith(" _twice")] == [2]
    assert per_move["<built-in method builtins.len>"] == 1
    # tests/ is not among the roots counted as the platform's own code; builtins never are.
    assert found.own == 0
    assert found.calls >= 40  # _move, _twice twice, len: per move
