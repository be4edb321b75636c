"""kit/grpc_polling.py (and the SDK's tafel/grpc_polling.py): gRPC's socket work stays on the
thread that polls for completions; EventEngine's threads then do (almost) none of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kit.grpc_polling import EXPERIMENTS, OPT_OUT, configure, experiments

ROOT = Path(__file__).resolve().parents[2]

# A grpc.aio server and a channel in one process, 4,000 messages each way on one stream, then the
# CPU ticks of each kind of thread (/proc: Linux, where the platform runs).
_PROBE = """
import {first}
import asyncio, json, os, grpc

async def main():
    server = grpc.aio.server()

    async def echo(requests, context):
        async for request in requests:
            yield request

    handler = grpc.stream_stream_rpc_method_handler(echo)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("probe.Echo", {{"Echo": handler}}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{{port}}") as channel:
        call = channel.stream_stream("/probe.Echo/Echo")()
        for _ in range(4000):
            await call.write(b"x")
            await call.read()
        await call.done_writing()
    await server.stop(0)
    ticks = {{}}
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{{task}}/comm") as comm, open(f"/proc/self/task/{{task}}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
            name = comm.read().strip()
            ticks[name] = ticks.get(name, 0) + int(fields[11]) + int(fields[12])
    print(json.dumps({{"ticks": ticks, "experiments": os.environ.get("GRPC_EXPERIMENTS", "")}}))

asyncio.run(main())
"""


def _probe(first: str, **env: str) -> dict[str, object]:
    environ = {k: v for k, v in os.environ.items() if k not in (EXPERIMENTS, OPT_OUT)}
    environ.update(env)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(first=first)],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_two_experiments_are_turned_off_and_what_a_value_says_is_kept() -> None:
    both = "-event_engine_listener,-event_engine_client"
    assert experiments("") == both
    assert experiments("tcp_rcv_lowat") == f"tcp_rcv_lowat,{both}"
    assert experiments("event_engine_listener") == "event_engine_listener,-event_engine_client"  # forced on
    assert experiments("-event_engine_client,") == "-event_engine_client,-event_engine_listener"
    assert experiments(both) == both  # (configured twice: the same)


def test_the_opt_out_leaves_grpc_defaults() -> None:
    environ = {OPT_OUT: "1", EXPERIMENTS: "fuse_filters"}
    configure(environ)
    assert environ == {OPT_OUT: "1", EXPERIMENTS: "fuse_filters"}
    environ = {}
    configure(environ)
    assert environ == {EXPERIMENTS: "-event_engine_listener,-event_engine_client"}


def test_imported_first_the_socket_work_leaves_event_engine_threads() -> None:
    default = _probe("sys", **{OPT_OUT: "1"})
    polled = _probe("kit.grpc_polling")
    assert polled["experiments"] == "-event_engine_listener,-event_engine_client"
    busy = dict(default["ticks"])  # type: ignore[call-overload]
    quiet = dict(polled["ticks"])  # type: ignore[call-overload]
    # With gRPC's defaults its EventEngine threads read and write the sockets (this is what the
    # setting removes: if this fails, a new grpcio changed where the work runs; measure again).
    assert busy.get("event_engine", 0) >= 10, busy
    assert quiet.get("event_engine", 0) <= max(2, busy["event_engine"] // 10), quiet


def test_the_sdk_copy_turns_off_the_client_experiment_only() -> None:
    polled = _probe("tafel.grpc_polling")
    assert polled["experiments"] == "-event_engine_client"
    kept = _probe("tafel.grpc_polling", **{EXPERIMENTS: "event_engine_client"})
    assert kept["experiments"] == "event_engine_client"
    other = _probe("tafel.grpc_polling", **{EXPERIMENTS: "event_engine_client_channel_resolver"})
    assert other["experiments"] == "event_engine_client_channel_resolver,-event_engine_client"
    default = _probe("tafel.grpc_polling", **{OPT_OUT: "1"})
    assert default["experiments"] == ""
