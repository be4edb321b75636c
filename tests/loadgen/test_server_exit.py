"""A server process the load generator sampled may exit during the run (chaos kills, a crash): the
run still ends with its summary, that process's figures taken from its last sample
(before, reading /proc/PID raised FileNotFoundError and no summary was printed)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from tafel_loadgen.__main__ import print_summary, summarize
from tafel_loadgen.stats import ServerProcess, Stats, context_switches, cpu_seconds

BUSY = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\ntime.sleep(60)"


def test_a_server_that_exits_keeps_its_last_sample_and_the_summary_prints(capsys) -> None:  # type: ignore[no-untyped-def]
    process = subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.DEVNULL)
    try:
        server = ServerProcess(process.pid, "rules", "services.connect4", cpu_seconds(process.pid))
        # Wait (bounded) until it has burnt its CPU, sampling as a run does.
        for _ in range(100):
            server.sample()
            if server.cpu() >= 0.25:
                break
            time.sleep(0.05)
        sampled_cpu, sampled_rss = server.cpu(), server.peak_rss_mib()
        assert sampled_cpu >= 0.25 and sampled_rss > 0
    finally:
        process.kill()
        process.wait(10)
    assert server.cpu() == sampled_cpu and server.peak_rss_mib() == sampled_rss and server.exited
    args = argparse.Namespace(scenario="games", game="connect4", games=1, think=0.0)
    summary = summarize(args, Stats(moves=10), 1.0, [server])
    print_summary(summary)
    out = capsys.readouterr().out
    assert "(exited during the run)" in out
    line = json.loads(out.strip().splitlines()[-1])
    assert line["servers"][0]["exited"] is True and line["servers"][0]["cpu_s"] == round(sampled_cpu, 2)


def test_context_switches_count_every_thread_and_a_window_takes_the_difference() -> None:
    # A process whose second thread sleeps 50 times: each sleep is a voluntary switch of that
    # thread, not of the main one (so a count of the main thread alone would miss them).
    # It then stays alive: a thread that ends takes its count out of /proc with it.
    code = "import threading, time\nsleeps = lambda: ([time.sleep(0.002) for _ in range(50)], time.sleep(60))\n"
    code += "threading.Thread(target=sleeps).start()"
    process = subprocess.Popen([sys.executable, "-c", code + "\n"], stdout=subprocess.DEVNULL)
    try:
        server = ServerProcess(process.pid, "rules", "services.connect4", cpu_seconds(process.pid))
        server.mark_window()
        assert server.switches() is None  # (not closed yet)
        for _ in range(100):  # bounded: until the thread's sleeps are counted
            count = context_switches(process.pid)
            if count is not None and server.switches_from is not None and count - server.switches_from >= 40:
                break
            time.sleep(0.05)
        server.mark_window(end=True)
        switches = server.switches()
        assert switches is not None and switches >= 40
    finally:
        process.kill()
        process.wait(10)
    assert context_switches(process.pid) is None  # gone
