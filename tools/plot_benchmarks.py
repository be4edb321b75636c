"""docs/benchmarks.json -> docs/benchmarks.png: moves/s and p99 latency against concurrent games."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from tools.platform import ROOT


def main() -> None:
    data = json.loads((ROOT / "docs" / "benchmarks.json").read_text())
    games = sorted(data["games"], key=lambda r: r["concurrent_games"])
    x = [r["concurrent_games"] for r in games]
    rate = [r["moves_per_s"] for r in games]
    p99 = [r["latency_ms"]["p99"] for r in games]
    figure, left = plt.subplots(figsize=(7, 4))
    left.plot(x, rate, "o-", color="tab:blue", label="moves/s")
    left.set_xlabel("concurrent Connect Four games (think time 0)")
    left.set_ylabel("moves/s", color="tab:blue")
    right = left.twinx()
    right.plot(x, p99, "s--", color="tab:red", label="p99 latency")
    right.set_ylabel("p99 submit → opponent's stream (ms)", color="tab:red")
    left.set_title(f"tafel on {data['machine']['cpus']} cores, load generator on the same machine")
    figure.tight_layout()
    out = ROOT / "docs" / "benchmarks.png"
    figure.savefig(out, dpi=110)
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
