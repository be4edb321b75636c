"""The conformance kit end to end: the reference client (Python SDK) passes every scenario, and
each deliberately broken client fails the scenario that checks its fault - with a reason that
names it. One platform for the module; the kit runs as the console script a client author uses.

The TypeScript SDK's client (clients/typescript/conformance/client.ts, built by `make ts`, which
`make test` runs first) passes the same scenarios, those of challenges, offers and the account's
event stream (its --events mode) included."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tafel.conformance.catalog import SCENARIOS

from tools.platform import Platform

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / ".venv" / "bin" / "tafel-conformance"
CLIENTS = {
    "python-sdk": f"{sys.executable} -m tafel.conformance.reference_client",
    "typescript-sdk": f"node {ROOT / 'clients' / 'typescript' / 'dist' / 'conformance' / 'client.js'}",
}
BROKEN = f"{sys.executable} -m tests.conformance.broken_client"


def conformance(
    platform: Platform | None, client: str, *scenarios: str
) -> tuple[int, dict[str, dict[str, object]], str]:
    """Run the kit as a client author would; platform None = the kit starts its own."""
    args = [str(KIT), "--client", client, "--json", "-"]
    if platform is not None:
        # The fixture allows clocks down to 0.5 s (ENV), so act-before-clock can use a short one.
        args += ["--server", platform.gateway_addresses[0], "--clock-s", "2"]
    args += [arg for name in scenarios for arg in ("--scenario", name)]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=240)
    text = done.stdout
    report = json.loads(text[text.index("\n{") + 1 :])
    return done.returncode, {s["name"]: s for s in report["scenarios"]}, text


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_the_reference_client_passes_every_scenario(client: str) -> None:
    # The kit's own platform (two gateways): gateway-restart kills one of them mid-game.
    code, results, text = conformance(None, CLIENTS[client])
    assert set(results) == set(SCENARIOS)
    assert all(r["passed"] for r in results.values()), text
    assert code == 0
    for name in ("retry-same-request-id", "gateway-restart"):
        assert results[name]["details"]["retried_request_id"], text  # type: ignore[index]
    assert f"{len(SCENARIOS)}/{len(SCENARIOS)} scenarios passed" in text


def test_against_a_given_server_gateway_restart_says_it_needs_the_kits_own_platform(
    client_platform: Platform,
) -> None:
    code, results, text = conformance(client_platform, CLIENTS["python-sdk"], "resign", "gateway-restart")
    assert code == 1 and results["resign"]["passed"], text
    assert "run without --server" in str(results["gateway-restart"]["reason"])


def test_a_client_that_retries_with_a_new_request_id_fails_that_scenario(client_platform: Platform) -> None:
    code, results, text = conformance(
        client_platform, f"{BROKEN} new-request-id", "retry-same-request-id", "play-connect4"
    )
    assert code == 1
    assert results["play-connect4"]["passed"], text  # it plays; only the retry is wrong
    failed = results["retry-same-request-id"]
    assert not failed["passed"] and "new request id" in str(failed["reason"]), text


def test_a_client_that_skips_an_event_on_resume_fails_the_watch_scenario(client_platform: Platform) -> None:
    code, results, text = conformance(client_platform, f"{BROKEN} skip-on-resume", "resume-watch")
    assert code == 1
    failed = results["resume-watch"]
    assert not failed["passed"] and "lost events" in str(failed["reason"]), text


def test_a_client_that_resumes_its_event_stream_from_now_loses_events(client_platform: Platform) -> None:
    code, results, text = conformance(
        client_platform, f"{BROKEN} events-from-now", "resume-events", "challenge-accepted"
    )
    assert code == 1
    assert results["challenge-accepted"]["passed"], text  # it answers and plays; only its resume is wrong
    failed = results["resume-events"]
    # What it loses depends on when the cut lands against its reopening: a decline it prints
    # ("lost events") or, on a busy machine, the next challenge itself (never answered).
    reason = str(failed["reason"])
    assert not failed["passed"] and ("lost events" in reason or "did not answer the challenge" in reason), text


def test_a_client_that_ignores_offers_fails_the_draw_scenario(client_platform: Platform) -> None:
    code, results, text = conformance(client_platform, f"{BROKEN} ignore-offers", "draw-offer-answered")
    assert code == 1
    failed = results["draw-offer-answered"]
    assert not failed["passed"] and "did not answer the draw offer" in str(failed["reason"]), text


def test_a_client_that_reopens_a_cut_chat_from_the_start_fails_the_chat_scenario(client_platform: Platform) -> None:
    code, results, text = conformance(client_platform, f"{BROKEN} chat-from-start", "chat-in-a-game")
    assert code == 1
    failed = results["chat-in-a-game"]
    assert not failed["passed"] and "repeated" in str(failed["reason"]), text
