"""A real SMTP server in the test process (aiosmtpd, on its own thread): it keeps every message it
accepted, parsed, and can be told to refuse the next tries with a temporary 451."""

from __future__ import annotations

import asyncio
import email
import email.policy
import threading
import time
from collections.abc import Iterator
from email.message import EmailMessage
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from tests.platforms import platform_fixture
from tools.redis_server import free_port


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.messages: list[EmailMessage] = []
        self.refuse_next = 0
        self.refused = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            if self.refuse_next > 0:
                self.refuse_next -= 1
                self.refused += 1
                return "451 4.3.0 try again later"
            parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
            assert isinstance(parsed, EmailMessage)
            self.messages.append(parsed)
        return "250 OK"


class Relay:
    def __init__(self) -> None:
        self.recorder = Recorder()
        self.port = free_port()
        self.controller = Controller(self.recorder, hostname="127.0.0.1", port=self.port)

    def start(self) -> Relay:
        self.controller.start()
        return self

    def stop(self) -> None:
        self.controller.stop()

    def to(self, address: str) -> list[EmailMessage]:
        with self.recorder.lock:
            return [m for m in self.recorder.messages if m["To"] == address]

    async def wait_for(self, address: str, count: int = 1, timeout_s: float = 15.0) -> list[EmailMessage]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = self.to(address)
            if len(found) >= count:
                return found
            await asyncio.sleep(0.05)
        raise AssertionError(f"{count} mail(s) to {address} not received; got {len(self.to(address))}")


def body(message: EmailMessage) -> str:
    part = message.get_body(("plain",))
    assert part is not None
    content = part.get_content()
    assert isinstance(content, str)
    return content


def relayed_platform() -> tuple[Any, Any]:
    """A test module's `relay` fixture and a `platform` fixture whose gateways send their mails to
    it (immediate ones at once, retried quickly): `relay, platform = relayed_platform()`."""

    @pytest.fixture(scope="module")
    def relay() -> Iterator[Relay]:
        running = Relay().start()
        try:
            yield running
        finally:
            running.stop()

    def mail_env(request: pytest.FixtureRequest) -> dict[str, str]:
        running: Relay = request.getfixturevalue("relay")
        return {
            "TAFEL_TOKEN_SECRET": "client-tests-secret-0123456789abcdef",
            "TAFEL_LOG_LEVEL": "WARNING",
            "TAFEL_GRACE_S": "1",
            "TAFEL_SMTP_HOST": "127.0.0.1",
            "TAFEL_SMTP_PORT": str(running.port),
            "TAFEL_MAIL_MAX_WAIT_S": "0.1",
            "TAFEL_MAIL_RETRY_S": "0.2",
        }

    return relay, platform_fixture(env=mail_env, base={})
