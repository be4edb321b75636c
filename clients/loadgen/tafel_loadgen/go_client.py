"""`games --client go`: the players in Go (clients/loadgen/go, `make loadgen-go`), the window,
the servers' CPU and the summary still here.

The Python players cost ~200 µs of CPU a move on the cores the servers use (grpc.aio's fixed cost
per operation, three a move, and Python's around it: docs/benchmarks.md, "The load generator");
the Go players play the same games over the same protos for a fraction of that, so a benchmark's
servers are less limited by their own client. The Go program speaks lines with this process
(clients/loadgen/go/main.go): "matched" for each player's first match, which counts on the
window's board as a Python player's would; "open" back when the board opens the window; "result
{json}" at the end, Stats.as_dict's fields.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tafel_loadgen.stats import Stats
from tafel_loadgen.window import POLL_S, SETUP_TIMEOUT_S, Board

BINARY_ENV = "TAFEL_LOADGEN_GO"
# Where `make loadgen-go` puts it, from the repository's root.
BUILT = Path(__file__).resolve().parents[3] / "build" / "loadgen-go" / "tafel-loadgen-go"


def binary() -> Path:
    """The Go players' program: TAFEL_LOADGEN_GO, else what `make loadgen-go` built."""
    path = Path(os.environ.get(BINARY_ENV) or BUILT)
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"no Go load generator at {path}: run `make loadgen-go` (or set {BINARY_ENV})")
    return path


def command(args: Any, index: int, share: int) -> list[str]:
    return [
        str(binary()),
        "--gateways",
        args.gateways,
        "--players",
        str(args.seats * share),
        "--think",
        f"{args.think}s",
        "--duration",
        f"{args.duration}s",
        "--seed",
        str(args.seed + index),
    ]


def run_go_games(args: Any, index: int, share: int, board: Board) -> Stats:
    """`share` games' players in one Go process, counted on `board` like this process's own."""
    process = subprocess.Popen(command(args, index, share), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    found: list[dict[str, Any]] = []
    timed_out = False

    def read(stdout: Any) -> None:
        for line in stdout:
            if line == "matched\n":
                board.matched_first()
            elif line.startswith("result "):
                found.append(json.loads(line[len("result ") :]))

    reader = threading.Thread(target=read, args=(process.stdout,), daemon=True)
    reader.start()
    try:
        # Tell it when the window opens (every player of every client process matched), as
        # Window.follow learns it: polling the board during setup.
        while not board.started() and process.poll() is None:
            if time.monotonic() - board.launched > SETUP_TIMEOUT_S:
                timed_out = board.open_now() or timed_out
            time.sleep(POLL_S)
        if process.poll() is None:
            process.stdin.write("open\n")
            process.stdin.flush()
        process.wait()
        reader.join()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stats = Stats()
    if not found:
        stats.errors["CLIENT_PROCESS_DIED"] += 1
        return stats
    stats.merge(found[0])
    stats.setup_s = board.started() - board.launched  # as Window's: from before any client started
    if timed_out:
        stats.errors["SETUP_TIMEOUT"] += 1
    return stats
