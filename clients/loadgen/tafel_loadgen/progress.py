"""A long run's progress on the terminal (rich), on stderr: stdout keeps the summary and its JSON
line for scripts (tools/bench_load.py parses it). Nothing is drawn when stderr is not a terminal."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn


def run_progress() -> Progress:
    console = Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,  # the summary replaces it
        disable=not console.is_terminal,
    )
