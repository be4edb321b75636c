"""The platform with TLS from certificate files named in the environment, mutual
TLS between gateway and rules service, and the SDK over TLS. Certificates come from
tests/certificates.py (openssl: a private CA, a server certificate for 127.0.0.1, a client one)."""

from __future__ import annotations

import shutil
import ssl
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from tafel.client import TafelClient
from tafel.play.v1 import play_pb2, play_pb2_grpc
from tafel.rules.v1 import rules_pb2, rules_pb2_grpc

from tests.certificates import make_certificates
from tests.gateway.harness import Proc, spawn, spawn_gateway
from tools.redis_server import free_port

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


@pytest.fixture(scope="module")
def tls_system(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Proc, Proc]]:
    folder = tmp_path_factory.mktemp("certs")
    make_certificates(folder)
    server_tls = {"TAFEL_TLS_CERT": str(folder / "server.pem"), "TAFEL_TLS_KEY": str(folder / "server.key")}
    rules = spawn(
        "c4-mtls",
        "services.connect4",
        {"REDIS_URL": redis_url, "TAFEL_PORT": str(free_port()), **server_tls,
         "TAFEL_TLS_CLIENT_CA": str(folder / "ca.pem")},
    )
    gateway = spawn_gateway(
        redis_url,
        {"connect4": rules.address},
        name="gateway-tls",
        **server_tls,
        TAFEL_WEB_PORT="0",  # the web edge serves HTTPS from the same certificate
        TAFEL_RULES_TLS_CA=str(folder / "ca.pem"),
        TAFEL_RULES_TLS_CERT=str(folder / "client.pem"),
        TAFEL_RULES_TLS_KEY=str(folder / "client.key"),
    )
    try:
        yield folder, rules, gateway
    finally:
        gateway.stop()
        rules.stop()


async def test_the_sdk_plays_over_tls_and_the_gateway_reaches_rules_over_mutual_tls(
    tls_system: tuple[Path, Proc, Proc],
) -> None:
    folder, _, gateway = tls_system
    root = (folder / "ca.pem").read_bytes()
    async with await TafelClient.connect(gateway.address, tls=True, root_certificates=root) as alice, \
            await TafelClient.connect(gateway.address, tls=True, root_certificates=root) as bob:
        await alice.sign_in_as_guest()
        await bob.sign_in_as_guest()
        # Creating a game goes through the gateway's mutual-TLS channel to the rules service.
        lobby = play_pb2_grpc.LobbyServiceStub(alice.channel)
        types = await lobby.ListGameTypes(play_pb2.ListGameTypesRequest(), metadata=alice.metadata(), timeout=10)
        assert [t.game for t in types.game_types] == ["connect4"]


async def test_plaintext_and_certificate_less_callers_are_refused(tls_system: tuple[Path, Proc, Proc]) -> None:
    folder, rules, gateway = tls_system
    async with grpc.aio.insecure_channel(gateway.address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await play_pb2_grpc.AccountServiceStub(channel).SignInAsGuest(play_pb2.SignInAsGuestRequest(), timeout=5)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    # TLS to the rules service without a client certificate: the handshake is refused.
    credentials = grpc.ssl_channel_credentials(root_certificates=(folder / "ca.pem").read_bytes())
    async with grpc.aio.secure_channel(rules.address, credentials) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await rules_pb2_grpc.RulesServiceStub(channel).DescribeGame(rules_pb2.DescribeGameRequest(), timeout=5)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_the_web_edge_serves_https_from_the_gateways_certificate(tls_system: tuple[Path, Proc, Proc]) -> None:
    folder, _, gateway = tls_system
    url = next(line.split()[-1] for line in gateway.output if line.startswith("WEB "))
    assert url.startswith("https://127.0.0.1:")
    sign_in = "/tafel.play.v1.AccountService/SignInAsGuest"
    headers = {"content-type": "application/json", "connect-protocol-version": "1"}
    trust = ssl.create_default_context(cafile=str(folder / "ca.pem"))
    async with httpx.AsyncClient(verify=trust, timeout=10) as client:
        answer = await client.post(url + sign_in, content=b"{}", headers=headers)
    assert answer.status_code == 200 and answer.json()["session"]["token"]
    # Plain HTTP to the HTTPS port is no way in: the connection is dropped, or refused.
    plain: httpx.Response | None
    async with httpx.AsyncClient(timeout=10) as client:
        try:
            plain = await client.post(url.replace("https://", "http://") + sign_in, content=b"{}", headers=headers)
        except httpx.HTTPError:
            plain = None
    assert plain is None or plain.status_code >= 400
