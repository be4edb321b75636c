"""The players of `tools.swarm upgrade`: `--games` pairs of SDK players, each pair playing Connect Four
in rooms of its own, one game after another, until SIGUSR1; then every game in play is finished, each
record checked (tools/audited_play.py) and one JSON line printed.

Run inside the tafel image on the stack's network (`docker run --network tafel_default ...`): a
swarm without IPVS (these machines' kernels have none) has no routing mesh to publish the gateways
on 127.0.0.1, so the players reach every gateway task by name (`tasks.gateway`), as the bot pool
does. Each player's channel balances its calls over the addresses the name has and looks again when
a connection ends, so players move by themselves to the gateways that replace the old ones.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
from collections import Counter
from dataclasses import asdict, dataclass, field

import grpc
from tafel import retry
from tafel.client import TafelClient
from tafel.errors import TafelError

from tools.audited_play import Acks, play_out, record_problem, room_game


@dataclass
class Report:
    games_started: int = 0
    games_finished: int = 0
    games_stuck: int = 0
    moves: int = 0
    longest_pause_s: float = 0.0
    errors: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)


async def player(target: str) -> TafelClient:
    channel = grpc.aio.insecure_channel(
        target, options=[("grpc.lb_policy_name", "round_robin"), ("grpc.service_config", retry.service_config())]
    )
    client = TafelClient(channel)
    await client.sign_in_as_guest()
    return client


async def pair(target: str, report: Report, stop: asyncio.Event, think_s: float) -> None:
    players = [await player(target), await player(target)]
    try:
        while not stop.is_set():
            try:
                game_id, seats = await room_game(players[0], players[1:], "connect4")
            except TafelError as error:
                report.errors[error.code.name] += 1
                await asyncio.sleep(1)
                continue
            report.games_started += 1
            acks = Acks()
            try:
                outcomes = await play_out(players, game_id, seats, "connect4", acks, think_s=think_s, timeout_s=300)
            except TimeoutError:
                report.games_stuck += 1
                report.problems.append(f"{game_id}: not over after 300 s")
                continue
            except TafelError as error:
                report.errors[error.code.name] += 1
                report.problems.append(f"{game_id}: a player gave up on {error.code.name}: {error.message}")
                continue
            report.games_finished += 1
            report.moves += len(acks.versions)
            report.longest_pause_s = round(max(report.longest_pause_s, acks.longest_pause_s()), 3)
            # A gateway stopped between a move's commit and its answer loses the answer, never the move.
            problem = await record_problem(players[0], game_id, acks, outcomes[0], lost_answers=2)
            if problem:
                report.problems.append(f"{game_id}: {problem}")
    finally:
        for client in players:
            await client.close()


async def run(args: argparse.Namespace) -> Report:
    report = Report()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, stop.set)
    pairs = [asyncio.ensure_future(pair(args.target, report, stop, args.think)) for _ in range(args.games)]
    print(f"READY {args.games} pairs", flush=True)
    await asyncio.gather(*pairs)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="dns:///tasks.gateway:50051")
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--think", type=float, default=1.0)
    args = parser.parse_args(argv)
    report = asyncio.run(run(args))
    print(json.dumps(asdict(report)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
