"""A rules stream's writer holds the first entry it takes for `batch_wait_s`, so that entries
queued meanwhile leave in the same ApplyMoves message (gateway/rules/stream.py MoveStream,
TAFEL_RULES_BATCH_WAIT_MS): fewer messages, and so fewer wake-ups at both ends, for a bounded wait.
The stream's far end here is a recording stub that answers every entry; the router against a real
rules service is tests/gateway/rules/test_stream_calls.py's."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from tafel.rules.v1 import rules_pb2

from gateway.rules.stream import MAX_BATCH_ENTRIES, MoveStream
from gateway.settings import GatewaySettings
from kit.settings import ConfigError


class RecordingCall:
    """An ApplyMoves call: records each message written, answers each entry in it."""

    def __init__(self, messages: list[tuple[float, rules_pb2.ApplyMovesRequest]]) -> None:
        self.messages = messages
        self.answers: asyncio.Queue[rules_pb2.ApplyMovesResponse] = asyncio.Queue()

    async def write(self, message: rules_pb2.ApplyMovesRequest) -> None:
        self.messages.append((time.monotonic(), message))
        for entry in list(message.batch) or [message]:  # (one entry: the message itself)
            answer = rules_pb2.ApplyMovesResponse(correlation_id=entry.correlation_id)
            answer.viewed.status.version = 1
            await self.answers.put(answer)

    def __aiter__(self) -> RecordingCall:
        return self

    async def __anext__(self) -> rules_pb2.ApplyMovesResponse:
        return await self.answers.get()

    async def initial_metadata(self) -> tuple[()]:
        return ()

    def cancel(self) -> bool:
        return True


class RecordingStub:
    def __init__(self) -> None:
        self.messages: list[tuple[float, rules_pb2.ApplyMovesRequest]] = []

    def ApplyMoves(self, **_: Any) -> RecordingCall:
        return RecordingCall(self.messages)


async def sent(wait_s: float, entries: int, spacing_s: float) -> tuple[list[int], float]:
    """Entries submitted `spacing_s` apart on a stream holding for `wait_s`: the entries in each
    message written, and the longest an entry waited for its answer."""
    stub = RecordingStub()
    stream = MoveStream(stub, "connect4@test#0", batch_wait_s=wait_s)  # type: ignore[arg-type]
    assert await stream.wait_up(5.0)
    try:
        waits = []

        async def one(index: int) -> None:
            await asyncio.sleep(index * spacing_s)
            started = time.monotonic()
            answer = await stream.submit(rules_pb2.GetViewRequest(game_id=f"g{index}"), "view")
            assert answer.viewed.status.version == 1
            waits.append(time.monotonic() - started)

        await asyncio.gather(*(one(index) for index in range(entries)))
        return [len(message.batch) or 1 for _, message in stub.messages], max(waits)
    finally:
        await stream.close()


async def test_entries_queued_within_the_wait_leave_in_one_message() -> None:
    sizes, longest = await sent(wait_s=0.2, entries=5, spacing_s=0.01)
    assert sizes == [5]  # all five, 40 ms apart in all, within the first one's 200 ms
    assert longest < 2.0


async def test_without_a_wait_each_entry_that_comes_alone_leaves_alone() -> None:
    sizes, _ = await sent(wait_s=0.0, entries=5, spacing_s=0.05)
    assert sizes == [1, 1, 1, 1, 1]


async def test_an_entry_waits_about_the_wait_and_no_more() -> None:
    sizes, longest = await sent(wait_s=0.05, entries=1, spacing_s=0.0)
    assert sizes == [1] and 0.04 <= longest < 1.0


async def test_a_message_carries_at_most_its_cap_and_every_entry_is_answered() -> None:
    # A round's thousands of entries queued at once leave in several messages, none past the cap.
    entries = MAX_BATCH_ENTRIES * 2 + 100
    sizes, _ = await sent(wait_s=0.001, entries=entries, spacing_s=0.0)
    assert max(sizes) == MAX_BATCH_ENTRIES and sum(sizes) == entries


def test_the_setting() -> None:
    base = {"REDIS_URL": "redis://127.0.0.1:1/0", "TAFEL_TOKEN_SECRET": "s" * 20}
    assert GatewaySettings.from_env(base).rules_batch_wait_s == 0.001
    assert GatewaySettings.from_env({**base, "TAFEL_RULES_BATCH_WAIT_MS": "0"}).rules_batch_wait_s == 0.0
    assert GatewaySettings.from_env({**base, "TAFEL_RULES_BATCH_WAIT_MS": "2.5"}).rules_batch_wait_s == 0.0025
    for bad in ("-1", "51", "soon"):
        with pytest.raises(ConfigError):
            GatewaySettings.from_env({**base, "TAFEL_RULES_BATCH_WAIT_MS": bad})
