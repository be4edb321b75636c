"""Hostile requests at every RPC of every server (issue 18): `make fuzz`, short version in make test.

Starts the platform on loopback (tools/platform.py), signs in a guest, then sends each method of
every service the servers expose random bytes, and valid messages with hostile field values
(huge numbers, wrong enum values, long and odd strings, stale and future ids), with and without
the token. Counts the status codes and fails on UNKNOWN, INTERNAL, a unary call that hangs past
its deadline, a server process that died, or a message that leaks exception text.

    python -m tools.fuzz [--rounds N] [--seed S]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
from collections import Counter
from collections.abc import Coroutine, Iterator
from typing import Any

import grpc
from google.protobuf import descriptor, message_factory
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2
from tafel.diagnostics.v1 import diagnostics_pb2
from tafel.play.v1 import bots_pb2, play_pb2, play_pb2_grpc, tournaments_pb2
from tafel.rules.v1 import rules_pb2

from kit.internal_auth import internal_metadata
from tools.platform import Platform, local_secret

LEAKS = ("Traceback", "Exception", "Error parsing", "<class", "DecodeError", 'File "')
BAD_CODES = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}
STRINGS = ("", "x" * 5000, "\x00\xff", "../../etc/passwd", "99999999999999999999-1", "-1", "NaN", "😀" * 50, "' OR 1=1")
INTS = (0, -1, 1, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63))
UINTS = (0, 1, 2**32 - 1, 2**64 - 1)


def services(gateway: bool) -> Iterator[descriptor.ServiceDescriptor]:
    files = (play_pb2, bots_pb2, tournaments_pb2) if gateway else (rules_pb2,)
    for module in (*files, diagnostics_pb2, health_pb2, reflection_pb2):
        yield from module.DESCRIPTOR.services_by_name.values()


def hostile(message_type: descriptor.Descriptor, rng: random.Random, depth: int = 0) -> Message:
    message = message_factory.GetMessageClass(message_type)()
    for field in message_type.fields:
        if rng.random() < 0.4:
            continue
        repeated = bool(field.is_repeated)
        values = [_value(field, rng, depth) for _ in range(rng.choice((1, 3)) if repeated else 1)]
        values = [value for value in values if value is not None]
        if not values:
            continue
        try:
            if field.message_type is not None:
                if repeated and not field.message_type.GetOptions().map_entry:
                    for value in values:
                        getattr(message, field.name).add().CopyFrom(value)
                elif not repeated:
                    getattr(message, field.name).CopyFrom(values[0])
            elif repeated:
                getattr(message, field.name).extend(values)
            else:
                setattr(message, field.name, values[0])
        except (TypeError, ValueError):
            continue  # e.g. a oneof already set, a value the Python type refuses
    return message


def _value(field: descriptor.FieldDescriptor, rng: random.Random, depth: int) -> Any:
    kind = field.type
    if field.message_type is not None:
        return hostile(field.message_type, rng, depth + 1) if depth < 3 else None
    if kind == field.TYPE_STRING:
        return rng.choice(STRINGS)
    if kind == field.TYPE_BYTES:
        return rng.randbytes(rng.choice((0, 3, 200)))
    if kind == field.TYPE_BOOL:
        return rng.random() < 0.5
    if kind == field.TYPE_ENUM:
        return rng.choice((0, 1, 99, -5, 2**31 - 1))
    if kind in (field.TYPE_DOUBLE, field.TYPE_FLOAT):
        return rng.choice((0.0, -1.0, 1e308, float("nan"), float("inf")))
    if kind in (field.TYPE_UINT32, field.TYPE_FIXED32):
        return rng.choice(UINTS[:3])
    if kind in (field.TYPE_UINT64, field.TYPE_FIXED64):
        return rng.choice(UINTS)
    if kind in (field.TYPE_INT32, field.TYPE_SINT32, field.TYPE_SFIXED32):
        return rng.choice(INTS[:5])
    return rng.choice(INTS)


class Fuzzer:
    def __init__(self, rng: random.Random, stream_deadline_s: float = 3.0) -> None:
        self.rng = rng
        self.stream_deadline_s = stream_deadline_s
        self.codes: Counter[str] = Counter()
        self.problems: list[str] = []
        self.calls = 0

    async def call(
        self, channel: grpc.aio.Channel, method: descriptor.MethodDescriptor, payload: bytes, md: Any
    ) -> None:
        path = f"/{method.containing_service.full_name}/{method.name}"
        self.calls += 1
        code: grpc.StatusCode
        details = ""
        try:
            if method.client_streaming:
                call: Any = (channel.stream_stream if method.server_streaming else channel.stream_unary)(path)(
                    metadata=md, timeout=self.stream_deadline_s
                )
                await call.write(payload)
                await call.done_writing()
                if method.server_streaming:
                    async for _ in call:
                        pass
                else:
                    await call
            elif method.server_streaming:
                async for _ in channel.unary_stream(path)(payload, metadata=md, timeout=self.stream_deadline_s):
                    pass
            else:
                await channel.unary_unary(path)(payload, metadata=md, timeout=5)
            code = grpc.StatusCode.OK
        except grpc.aio.AioRpcError as error:
            code, details = error.code(), error.details() or ""
        self.codes[code.name] += 1
        if code in BAD_CODES:
            self.problems.append(f"{path}: {code.name} {details[:120]!r}")
        elif code == grpc.StatusCode.DEADLINE_EXCEEDED and not method.server_streaming:
            self.problems.append(f"{path}: a unary call hung past its deadline")
        if any(leak in details for leak in LEAKS):
            self.problems.append(f"{path}: leaked exception text {details[:120]!r}")

    def method(
        self, channel: grpc.aio.Channel, method: descriptor.MethodDescriptor, token: Any, rounds: int
    ) -> list[Coroutine[Any, Any, None]]:
        calls = []
        for index in range(rounds):
            md = token if index % 3 else ()
            if index % 2 == 0:
                payload = self.rng.randbytes(self.rng.choice((1, 7, 64, 1000)))
            else:
                payload = hostile(method.input_type, self.rng).SerializeToString()
            calls.append(self.call(channel, method, payload, md))
        return calls


async def fuzz(platform: Platform, rounds: int, seed: int, stream_deadline_s: float = 3.0) -> Fuzzer:
    fuzzer = Fuzzer(random.Random(seed), stream_deadline_s)
    targets = [(address, True) for address in platform.gateway_addresses]
    targets += [(addresses[0], False) for addresses in platform.rules_addresses.values()]
    for address, is_gateway in targets:
        async with grpc.aio.insecure_channel(address) as channel:
            # Rules services: with the internal secret, so the fuzz reaches their handlers (without it
            # every call is refused before any handler runs: tests/gateway/test_security_e2e.py).
            token: Any = internal_metadata(os.environ.get("TAFEL_INTERNAL_SECRET") or local_secret("internal-secret"))
            if is_gateway:
                accounts = play_pb2_grpc.AccountServiceStub(channel)
                session = (await accounts.SignInAsGuest(play_pb2.SignInAsGuestRequest())).session
                token = (("authorization", f"Bearer {session.token}"),)
            calls = [
                call
                for service in services(is_gateway)
                for method in service.methods
                for call in fuzzer.method(channel, method, token, rounds)
            ]
            # Concurrently, in bounded batches: a valid watch legitimately stays open until its
            # deadline, and one at a time those deadlines added up to minutes.
            for start in range(0, len(calls), 64):
                await asyncio.gather(*calls[start : start + 64])
    for child in platform.children:
        if child.process.poll() is not None:
            fuzzer.problems.append(f"{child.name} exited with {child.process.returncode}")
    return fuzzer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60, help="requests per method per server")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--stream-deadline", type=float, default=3.0, help="seconds a stream may stay open")
    args = parser.parse_args(argv)
    platform = Platform(fixed_ports=False, bot_pool=False).start()
    try:
        fuzzer = asyncio.run(fuzz(platform, args.rounds, args.seed, args.stream_deadline))
    finally:
        platform.stop()
    print(f"{fuzzer.calls} hostile requests; codes: " + ", ".join(f"{k} {v}" for k, v in fuzzer.codes.most_common()))
    for problem in fuzzer.problems[:50]:
        print("PROBLEM", problem)
    return 1 if fuzzer.problems else 0


if __name__ == "__main__":
    sys.exit(main())
