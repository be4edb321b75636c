"""`make run`'s banner: the browser app's address is the first thing it says and the
first thing it says to do next; every server's address is still listed."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tools.run_platform import banner


def test_the_web_url_comes_first_and_last() -> None:
    platform = SimpleNamespace(
        web_urls=["http://127.0.0.1:8080"],
        redis_url="redis://127.0.0.1:6390/0",
        data_dir=Path("/tmp/data"),
        rules_addresses={"connect4": ["127.0.0.1:50061"]},
        gateway_addresses=["127.0.0.1:50051"],
        bot_pool=True,
        children=[SimpleNamespace(name="connect4-0", metrics_url="http://127.0.0.1:9100/metrics")],
    )
    lines = banner(platform)  # type: ignore[arg-type]
    assert lines[0] == "open in a browser: http://127.0.0.1:8080"
    assert any(line.startswith("next: open http://127.0.0.1:8080") for line in lines[-2:]), lines
    for address in ("127.0.0.1:50061", "127.0.0.1:50051", "redis://127.0.0.1:6390/0", "/tmp/data", "9100/metrics"):
        assert any(address in line for line in lines), address
    assert lines[-1].endswith(".venv/bin/tafel play connect4 --vs-bot 1")


def test_without_a_web_edge_the_terminal_client_is_next() -> None:
    platform = SimpleNamespace(
        web_urls=[],
        redis_url="redis://x",
        data_dir=None,
        rules_addresses={},
        gateway_addresses=[],
        bot_pool=False,
        children=[],
    )
    lines = banner(platform)  # type: ignore[arg-type]
    assert lines[0] == "  redis          redis://x"
    assert lines[-1] == "next: in another terminal: .venv/bin/tafel play connect4 --vs-bot 1"
