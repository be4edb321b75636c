"""A real SMTP server in the test process (aiosmtpd, on its own thread): it keeps every message it
accepted, parsed, and can be told to refuse the next tries with a temporary 451."""

from __future__ import annotations

import asyncio
import email
import email.policy
import threading
import time
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller

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
