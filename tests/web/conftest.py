"""The whole platform as `make run` starts it (its gateways serve the web edge too), and clients
of the edge: the generated stubs and the Python SDK over tools/connect_channel.ConnectChannel."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from tafel.client import TafelClient

from tests.platforms import platform_fixture
from tools.connect_channel import ConnectChannel
from tools.platform import Platform

ORIGIN = "http://localhost:5173"
ENV = {
    "TAFEL_TOKEN_SECRET": "web-edge-tests-secret-0123456789",
    "TAFEL_LOG_LEVEL": "WARNING",
    "TAFEL_GRACE_S": "1",
    "TAFEL_MIN_PER_MOVE_S": "0.5",
    "TAFEL_WEB_ORIGINS": ORIGIN,
    "TAFEL_WEB_MAX_BODY_BYTES": "65536",
}

Connect = Callable[..., Awaitable[TafelClient]]


INDEX_HTML = "<!doctype html><title>tafel</title><p>the browser app goes here</p>"


def _with_static(request: pytest.FixtureRequest) -> dict[str, str]:
    static = request.getfixturevalue("tmp_path_factory").mktemp("web-static")
    (static / "index.html").write_text(INDEX_HTML)
    return {**ENV, "TAFEL_WEB_STATIC": str(static)}


# No bot pool: the tests serve bot requests themselves, over the edge.
edge_platform = platform_fixture("web edge", env=_with_static, bot_pool=False)


@pytest.fixture(scope="module")
def platform(edge_platform: Platform) -> Platform:
    assert len(edge_platform.web_urls) == 1, edge_platform.children[-1].output
    return edge_platform


@pytest.fixture(scope="module")
def edge_url(platform: Platform) -> str:
    return platform.web_urls[0]


@pytest.fixture(scope="module")
def called() -> set[str]:
    """Every method a test called over the edge (the last test checks none is left out)."""
    return set()


@pytest.fixture
async def edge(edge_url: str, called: set[str]) -> AsyncIterator[Connect]:
    """`await edge(codec="json", guest=True)`: an SDK client over the edge; closed after the test."""
    opened: list[TafelClient] = []

    async def connect(codec: str = "proto", *, guest: bool = True, http2: bool = False) -> TafelClient:
        channel = ConnectChannel(edge_url, codec=codec, http2=http2, called=called)
        client = TafelClient(channel)  # type: ignore[arg-type]
        opened.append(client)
        if guest:
            await client.sign_in_as_guest()
        return client

    yield connect
    for client in opened:
        await client.close()


@pytest.fixture
async def native(platform: Platform) -> AsyncIterator[Connect]:
    """The same over native gRPC, for comparing answers."""
    opened: list[TafelClient] = []

    async def connect(*, guest: bool = True) -> TafelClient:
        client = await TafelClient.connect(platform.gateway_addresses[0])
        opened.append(client)
        if guest:
            await client.sign_in_as_guest()
        return client

    yield connect
    for client in opened:
        await client.close()
