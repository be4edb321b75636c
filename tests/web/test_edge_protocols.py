"""The web edge on the wire: gRPC-Web framing, HTTP/2, CORS, deadlines, static files, and bad
input (malformed bodies, wrong content types, oversize bodies, missing or forged tokens, unknown
methods): the right status or HTTP 4xx, a readable reason, nothing changed, the process still up."""

from __future__ import annotations

import base64
import json
import struct
import time
from collections.abc import AsyncIterator

import grpc
import httpx
import pytest
from google.rpc import error_details_pb2, status_pb2
from tafel.connect4.v1 import connect4_pb2
from tafel.play.v1 import play_pb2, play_pb2_grpc

from tests.web.conftest import INDEX_HTML, ORIGIN, Connect
from tools.connect_channel import ConnectChannel
from tools.platform import Platform

CONNECT_JSON = {"content-type": "application/json", "connect-protocol-version": "1"}
GRPC_WEB = {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"}
SIGN_IN_AS_GUEST = "/tafel.play.v1.AccountService/SignInAsGuest"
GET_ME = "/tafel.play.v1.AccountService/GetMe"
SUBMIT_MOVE = "/tafel.play.v1.GameService/SubmitMove"


@pytest.fixture
async def http(edge_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=edge_url, timeout=30) as client:
        yield client


def reason(body: dict[str, object]) -> str:
    """The ErrorInfo reason in a Connect error body."""
    for detail in body.get("details", []):  # type: ignore[attr-defined]
        if detail["type"] == "google.rpc.ErrorInfo":
            value = base64.b64decode(detail["value"] + "=" * (-len(detail["value"]) % 4))
            return str(error_details_pb2.ErrorInfo.FromString(value).reason)
    raise AssertionError(f"no ErrorInfo in {body}")


def grpc_web_frames(body: bytes) -> tuple[list[bytes], dict[str, str]]:
    """Split a gRPC-Web response body into its messages and its trailers."""
    messages, trailers, offset = [], {}, 0
    while offset < len(body):
        flags, size = struct.unpack_from(">BI", body, offset)
        data = body[offset + 5 : offset + 5 + size]
        offset += 5 + size
        if flags & 0x80:
            for line in data.decode().split("\r\n"):
                if line:
                    key, _, value = line.partition(":")
                    trailers[key.strip().lower()] = value.strip()
        else:
            messages.append(data)
    return messages, trailers


def frame(message: bytes) -> bytes:
    return struct.pack(">BI", 0, len(message)) + message


async def guest_token(http: httpx.AsyncClient) -> str:
    response = await http.post(SIGN_IN_AS_GUEST, json={}, headers=CONNECT_JSON)
    assert response.status_code == 200, response.text
    return str(response.json()["session"]["token"])


async def test_grpc_web_unary_answers_and_refusals(http: httpx.AsyncClient) -> None:
    response = await http.post(SIGN_IN_AS_GUEST, content=frame(b""), headers=GRPC_WEB)
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/grpc-web")
    messages, trailers = grpc_web_frames(response.content)
    assert trailers["grpc-status"] == "0"
    session = play_pb2.SignInAsGuestResponse.FromString(messages[0]).session
    assert session.token and session.player.guest

    me = await http.post(GET_ME, content=frame(b""), headers={**GRPC_WEB, "authorization": f"Bearer {session.token}"})
    messages, trailers = grpc_web_frames(me.content)
    assert play_pb2.GetMeResponse.FromString(messages[0]).player == session.player

    refused = await http.post(GET_ME, content=frame(b""), headers=GRPC_WEB)
    messages, trailers = grpc_web_frames(refused.content)
    assert not messages and trailers["grpc-status"] == str(grpc.StatusCode.UNAUTHENTICATED.value[0])
    status = status_pb2.Status.FromString(base64.b64decode(trailers["grpc-status-details-bin"] + "=="))
    info = error_details_pb2.ErrorInfo()
    status.details[0].Unpack(info)
    assert info.reason == "TOKEN_MISSING" and "sign in" in status.message


async def test_grpc_web_server_stream_with_its_deadline(http: httpx.AsyncClient) -> None:
    token = await guest_token(http)
    code = (
        await http.post(
            "/tafel.play.v1.LobbyService/CreateRoom",
            json={"game": "connect4"},
            headers={**CONNECT_JSON, "authorization": f"Bearer {token}"},
        )
    ).json()["room"]["code"]
    request = play_pb2.WatchRoomRequest(code=code).SerializeToString()
    started = time.monotonic()
    watched = await http.post(
        "/tafel.play.v1.LobbyService/WatchRoom",
        content=frame(request),
        headers={**GRPC_WEB, "authorization": f"Bearer {token}", "grpc-timeout": "500m"},
    )
    elapsed = time.monotonic() - started
    messages, trailers = grpc_web_frames(watched.content)
    # The room as it is now, then nothing happens until the deadline ends the stream.
    assert play_pb2.WatchRoomResponse.FromString(messages[0]).room.code == code
    assert trailers["grpc-status"] == str(grpc.StatusCode.DEADLINE_EXCEEDED.value[0])
    assert 0.4 < elapsed < 10


async def test_connect_deadline_ends_a_unanswered_find_match(edge_url: str, edge: Connect) -> None:
    lonely = await edge()
    async with ConnectChannel(edge_url) as channel:
        lobby = play_pb2_grpc.LobbyServiceStub(channel)
        request = play_pb2.FindMatchRequest(game="plus4", request_id="web-deadline")
        started = time.monotonic()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in lobby.FindMatch(request, metadata=lonely.metadata(), timeout=0.5):
                pass
        assert caught.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
        assert time.monotonic() - started < 10


async def test_http2_cleartext_carries_the_same_api(edge: Connect) -> None:
    client = await edge("proto", http2=True)
    assert (await client.me()) == client.player
    response = await client.channel.client.post(  # type: ignore[attr-defined]
        "/tafel.play.v1.LobbyService/ListGameTypes", json={}, headers=CONNECT_JSON
    )
    assert response.http_version == "HTTP/2" and response.json()["gameTypes"]


async def test_cors_preflight_and_responses_for_allowed_origins_only(http: httpx.AsyncClient) -> None:
    asked = {
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type,connect-protocol-version,connect-timeout-ms",
    }
    allowed = await http.options(SUBMIT_MOVE, headers={"origin": ORIGIN, **asked})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == ORIGIN
    granted = allowed.headers["access-control-allow-headers"].lower()
    assert all(h in granted for h in ("authorization", "connect-protocol-version", "connect-timeout-ms"))
    refused = await http.options(SUBMIT_MOVE, headers={"origin": "http://evil.example", **asked})
    assert refused.status_code == 400 and "access-control-allow-origin" not in refused.headers
    # A real call from the page: the browser may read the status headers.
    call = await http.post(GET_ME, json={}, headers={**CONNECT_JSON, "origin": ORIGIN})
    assert call.status_code == 401 and call.headers["access-control-allow-origin"] == ORIGIN
    assert "grpc-status" in call.headers["access-control-expose-headers"].lower()


async def test_static_files_for_the_browser_app(http: httpx.AsyncClient) -> None:
    page = await http.get("/")
    assert page.status_code == 200 and page.text == INDEX_HTML
    assert (await http.get("/no-such-file.js")).status_code == 404


async def test_bad_input_is_refused_readably_and_changes_nothing(
    http: httpx.AsyncClient, edge: Connect, platform: Platform
) -> None:
    host, guest = await edge(), await edge()
    room = await host.create_room("connect4")
    await guest.join_room(room.code)
    game_id = (await host.wait_room_started(room.code)).game_id
    version = (await host.wait_for_game(game_id)).summary.status.version
    auth = {"authorization": f"Bearer {host.session.token}"}  # type: ignore[union-attr]

    # Malformed bodies: JSON that is not JSON, JSON of the wrong shape, bytes that are not protobuf.
    for body, headers in (
        (b"{not json", CONNECT_JSON),
        (json.dumps({"gameId": game_id, "expectedVersion": "many"}).encode(), CONNECT_JSON),
        (b"\xff\xff\xff\xff", {"content-type": "application/proto"}),
    ):
        response = await http.post(SUBMIT_MOVE, content=body, headers={**headers, **auth})
        assert response.status_code == 400, response.text
        error = response.json()
        assert error["code"] == "invalid_argument" and reason(error) == "MALFORMED_REQUEST"
        assert "SubmitMoveRequest" in error["message"] and "Traceback" not in error["message"]

    # A gRPC-Web body with a broken envelope (a frame longer than the body).
    broken = await http.post(SUBMIT_MOVE, content=b"\x00\x00\x00\x01\x00abc", headers={**GRPC_WEB, **auth})
    _, trailers = grpc_web_frames(broken.content)
    assert trailers["grpc-status"] in ("3", "13") and trailers["grpc-message"]

    # Wrong content types: HTTP 415, as the Connect protocol says.
    for content_type in ("text/plain", "application/xml", "application/connect+yaml"):
        wrong = await http.post(SUBMIT_MOVE, content=b"{}", headers={"content-type": content_type, **auth})
        assert wrong.status_code == 415, (content_type, wrong.status_code)

    # Oversize bodies (the cap is 64 KiB in these tests), by Connect and by gRPC-Web.
    big = play_pb2.SubmitMoveRequest(game_id=game_id, request_id="x" * 70_000).SerializeToString()
    over = await http.post(SUBMIT_MOVE, content=big, headers={"content-type": "application/proto", **auth})
    assert over.json()["code"] == "resource_exhausted" and over.json()["message"]
    over_web = await http.post(SUBMIT_MOVE, content=frame(big), headers={**GRPC_WEB, **auth})
    assert grpc_web_frames(over_web.content)[1]["grpc-status"] == str(grpc.StatusCode.RESOURCE_EXHAUSTED.value[0])

    # Missing, malformed and forged tokens.
    move = json.dumps({"gameId": game_id, "expectedVersion": str(version), "requestId": "web-bad-1",
                       "move": {"connect4": {"column": 3}}}).encode()
    signed = host.session.token  # type: ignore[union-attr]
    head, payload, _ = signed.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["p"] = "somebody-else"  # another player, under the real signature
    forged_payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    for token_header, expected in (
        ({}, "TOKEN_MISSING"),
        ({"authorization": "Basic abc"}, "TOKEN_INVALID"),
        ({"authorization": "Bearer not-a-token"}, "TOKEN_INVALID"),
        ({"authorization": f"Bearer {head}.{payload}.{'A' * 43}"}, "TOKEN_INVALID"),  # signature forged
        ({"authorization": f"Bearer {head}.{forged_payload}.{signed.split('.')[2]}"}, "TOKEN_INVALID"),
    ):
        refused = await http.post(SUBMIT_MOVE, content=move, headers={**CONNECT_JSON, **token_header})
        assert refused.status_code == 401, refused.text
        assert refused.json()["code"] == "unauthenticated" and reason(refused.json()) == expected

    # Unknown methods and services: HTTP 404 (Connect's unimplemented); Play is native gRPC only.
    for path in ("/tafel.play.v1.GameService/NoSuchMethod", "/tafel.play.v1.NoService/GetMe", "/tafel.rules.v1.RulesService/ApplyMove"):
        assert (await http.post(path, json={}, headers=CONNECT_JSON)).status_code == 404, path
    play = await http.post(
        "/tafel.play.v1.GameService/Play", content=frame(b""),
        headers={"content-type": "application/connect+proto", **auth},
    )
    end = json.loads(play.content[5:]) if play.status_code == 200 else play.json()
    error = end.get("error", end)
    assert error["code"] == "unimplemented" and "native gRPC" in error["message"]

    # Nothing changed: the game is where it was, and the move still works.
    assert (await host.get_game(game_id)).summary.status.version == version
    seat = (await host.get_game(game_id)).seat
    mover = host if seat == 0 else guest
    answer = await mover.submit_move(game_id, connect4_pb2.Move(column=3), expected_version=version)
    assert answer.version == version + 1
    # And the process is still up.
    assert all(child.process.poll() is None for child in platform.children)
