"""Session tokens (gateway/auth.py) against a real Redis: signed, refused when forged or expired."""

from __future__ import annotations

import time

import grpc
import pytest

from gateway.auth import Authenticator
from kit.errors import Refused
from kit.redis.layer import RedisLayer


async def test_tokens_are_signed_and_expire(layer: RedisLayer) -> None:
    auth = Authenticator(layer, secret=b"k" * 32, token_ttl_s=60)
    session = await auth.guest()
    assert auth.verify(session.token).player_id == session.player.player_id
    other = Authenticator(layer, secret=b"j" * 32, token_ttl_s=60)
    for verify, token in ((other.verify, session.token), (auth.verify, session.token + "x"), (auth.verify, "v1.a.b")):
        with pytest.raises(Refused) as caught:
            verify(token)
        assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
    old = auth.issue(session.player, now=time.time() - 120)
    with pytest.raises(Refused) as caught:
        auth.verify(old.token)
    assert caught.value.reason == "TOKEN_EXPIRED"
    with pytest.raises(Refused) as caught:
        auth.identity([("authorization", "Basic abc")])
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
