"""Hostile requests at every RPC of every server: `make fuzz`, short version in make test.

Starts the platform on loopback (tools/platform.py), signs in a guest, then sends each method of
every service the servers expose random bytes, and valid messages with hostile field values
(huge numbers, wrong enum values, long and odd strings, stale and future ids), with and without
the token. Then the boundaries, one field at a time: every field of every request (and of the
messages in it) set to each boundary value of its type while the rest stay empty: integers at
and past 2^31, 2^63 and 2^64 (as numbers where the type holds them, as text in string fields),
ids of every shape (a live game's, event ids past 64 bits, 64 and 65 characters, odd bytes),
empty and 1 MB strings and bytes, unknown enum numbers, and repeated fields of 100,000 entries.
Counts the status codes and fails on UNKNOWN, INTERNAL, UNAVAILABLE (the platform is healthy:
an outage answer to a request is blaming the server for the client's mistake), a unary call that
hangs past its deadline, a server process that died, or a message that leaks exception text.

    python -m tools.fuzz [--rounds N] [--seed S] [--no-boundaries]
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

from kit.errors import reason_of
from kit.internal_auth import internal_metadata
from tools.platform import Platform, local_secret

LEAKS = ("Traceback", "Exception", "Error parsing", "<class", "DecodeError", 'File "')
# UNAVAILABLE too: nothing is down during a fuzz run, so it can only be a client's mistake
# answered as an outage (which tells the client to retry for ever).
CLIENT_WRITE_FAILED = "Internal error from Core"  # set by the client's gRPC, never sent by a server (kit/errors.py)
BAD_CODES = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL, grpc.StatusCode.UNAVAILABLE}
STRINGS = ("", "x" * 5000, "\x00\xff", "../../etc/passwd", "99999999999999999999-1", "-1", "NaN", "😀" * 50, "' OR 1=1")
INTS = (0, -1, 1, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63))
UINTS = (0, 1, 2**32 - 1, 2**64 - 1)


# -- boundaries: every field, one at a time ---------------------------------------------------------

MB = 1 << 20
BIG_REPEATED = 100_000
NUMBERS_AS_TEXT = ("9223372036854775808", "18446744073709551616", "99999999999999999999999", "-9223372036854775809")
ID_SHAPES = (
    "99999999999999999999-1", "1-99999999999999999999", "18446744073709551615-18446744073709551615",
    "18446744073709551616-0", "0-0", "-1-1", "1-", "-", "a" * 64, "a" * 65, "a-b_c", "ÿ", "\x00", " ", "%2e%2e", "*",
)
INT_BOUNDS = {
    "int32": (2**31 - 1, -(2**31)),
    "uint32": (2**32 - 1, 2**31),
    "int64": (2**63 - 1, -(2**63), 2**53 + 1),
    "uint64": (2**64 - 1, 2**63, 2**63 - 1),
}


def _int_kind(field: descriptor.FieldDescriptor) -> str:
    if field.type in (field.TYPE_UINT32, field.TYPE_FIXED32):
        return "uint32"
    if field.type in (field.TYPE_UINT64, field.TYPE_FIXED64):
        return "uint64"
    if field.type in (field.TYPE_INT32, field.TYPE_SINT32, field.TYPE_SFIXED32):
        return "int32"
    return "int64"


def boundary_values(field: descriptor.FieldDescriptor, real_ids: tuple[str, ...]) -> list[Any]:
    """The boundary values of one (singular) field's type."""
    if field.type == field.TYPE_STRING:
        return ["", "x" * MB, *NUMBERS_AS_TEXT, *ID_SHAPES, *real_ids]
    if field.type == field.TYPE_BYTES:
        return [b"", b"\xff" * MB]
    if field.type == field.TYPE_BOOL:
        return [True]
    if field.type == field.TYPE_ENUM:
        return [99, -1, 2**31 - 1, -(2**31)]  # unknown numbers (proto3 enums are open)
    if field.type in (field.TYPE_DOUBLE, field.TYPE_FLOAT):
        return [float("nan"), float("inf"), float("-inf"), -0.0, 1e308 if field.type == field.TYPE_DOUBLE else 3e38]
    return [0, -1 if not _int_kind(field).startswith("u") else 1, *INT_BOUNDS[_int_kind(field)]]


def _set(message: Message, field: descriptor.FieldDescriptor, value: Any) -> None:
    if field.message_type is not None:
        getattr(message, field.name).CopyFrom(value)
    else:
        setattr(message, field.name, value)


def boundary_messages(
    message_type: descriptor.Descriptor, real_ids: tuple[str, ...], depth: int = 0
) -> Iterator[tuple[str, Message]]:
    """Messages of `message_type` with one field (or one field of a message field, recursively)
    at a boundary, the rest empty; repeated fields with BIG_REPEATED entries."""
    cls = message_factory.GetMessageClass(message_type)
    game_fields = [f for f in message_type.fields if f.name.endswith("game_id") and not f.is_repeated
                   and f.type == f.TYPE_STRING]

    def new() -> Message:
        # The other fields empty, but a game id names the live game: else most boundaries stop
        # at the game's existence check and never reach the code behind it.
        message = cls()
        for game_field in game_fields if real_ids else ():
            setattr(message, game_field.name, real_ids[0])
        return message

    for field in message_type.fields:
        if field.is_repeated:
            message = new()
            if field.message_type is not None and field.message_type.GetOptions().map_entry:
                value_field = field.message_type.fields_by_name["value"]
                key_field = field.message_type.fields_by_name["key"]
                entries = getattr(message, field.name)
                for i in range(BIG_REPEATED if key_field.type == key_field.TYPE_STRING else 1000):
                    key: Any = str(i) if key_field.type == key_field.TYPE_STRING else i
                    if value_field.message_type is not None:
                        entries[key].SetInParent()
                    else:
                        entries[key] = boundary_values(value_field, ())[0]
            elif field.message_type is not None:
                getattr(message, field.name).add()
                items = getattr(message, field.name)
                for _ in range(BIG_REPEATED - 1):
                    items.add()
            else:
                getattr(message, field.name).extend([boundary_values(field, ())[-1]] * BIG_REPEATED)
            yield f"{field.name}: {BIG_REPEATED:,} entries", message
            continue
        if field.message_type is not None:
            if depth < 2:
                for what, inner in boundary_messages(field.message_type, real_ids, depth + 1):
                    message = new()
                    _set(message, field, inner)
                    yield f"{field.name}.{what}", message
            continue
        for value in boundary_values(field, real_ids):
            message = new()
            try:
                _set(message, field, value)
            except (TypeError, ValueError):
                continue  # a value the Python type refuses (cannot be sent either)
            yield f"{field.name}={value!r:.50}", message


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
        self, channel: grpc.aio.Channel, method: descriptor.MethodDescriptor, payload: bytes, md: Any,
        what: str = "random",
    ) -> None:
        path = f"/{method.containing_service.full_name}/{method.name}"
        self.calls += 1
        code: grpc.StatusCode
        details = ""
        reason: str | None = None
        try:
            if method.client_streaming:
                call: Any = (channel.stream_stream if method.server_streaming else channel.stream_unary)(path)(
                    metadata=md, timeout=self.stream_deadline_s
                )
                await call.write(payload)
                await call.done_writing()
                if method.server_streaming:
                    async for raw in call:
                        self._refusal(path, method, raw, what)
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
            reason = reason_of(error)
        self.codes[code.name] += 1
        if code == grpc.StatusCode.INTERNAL and method.client_streaming and details == CLIENT_WRITE_FAILED:
            pass  # the caller's own gRPC: the server answered while a large message was on its way
        elif code in BAD_CODES:
            self.problems.append(f"{path}: {code.name} {reason} {details[:120]!r} ({what})")
        elif code == grpc.StatusCode.DEADLINE_EXCEEDED and not method.server_streaming:
            self.problems.append(f"{path}: a unary call hung past its deadline")
        if any(leak in details for leak in LEAKS):
            self.problems.append(f"{path}: leaked exception text {details[:120]!r}")

    def _refusal(self, path: str, method: descriptor.MethodDescriptor, raw: bytes, what: str) -> None:
        """A refusal sent as a message (the Play stream's) is held to the same codes."""
        fields = method.output_type.fields_by_name
        if "refusal" not in fields:
            return
        response: Any = message_factory.GetMessageClass(method.output_type).FromString(raw)
        if response.HasField("refusal"):
            refusal = response.refusal
            code = grpc.StatusCode.UNKNOWN
            for known in grpc.StatusCode:
                if known.value[0] == refusal.code:
                    code = known
            if code in BAD_CODES:
                self.problems.append(f"{path}: refusal {code.name} {refusal.reason} {refusal.message[:120]!r} ({what})")

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

    def boundaries(
        self, channel: grpc.aio.Channel, method: descriptor.MethodDescriptor, token: Any, real_ids: tuple[str, ...]
    ) -> list[Coroutine[Any, Any, None]]:
        calls = []
        for what, message in boundary_messages(method.input_type, real_ids):
            calls.append(self.call(channel, method, message.SerializeToString(), token, what))
        return calls


async def live_game(channel: grpc.aio.Channel) -> tuple[str, ...]:
    """Two guests matched into a Connect Four game: its id (and its players'), so the boundaries
    reach the code behind the existence checks (a malformed event id of a game that exists)."""
    accounts, lobby = play_pb2_grpc.AccountServiceStub(channel), play_pb2_grpc.LobbyServiceStub(channel)
    searches = []
    for _ in range(2):
        session = (await accounts.SignInAsGuest(play_pb2.SignInAsGuestRequest(), timeout=10)).session
        request = play_pb2.FindMatchRequest(game="connect4")
        md = (("authorization", f"Bearer {session.token}"),)
        searches.append((session.player.player_id, lobby.FindMatch(request, metadata=md, timeout=30)))

    async def matched(call: Any) -> str:
        async for update in call:
            if update.HasField("matched"):
                return str(update.matched.game_id)
        return ""

    game_ids = await asyncio.gather(*(matched(call) for _, call in searches))
    return (game_ids[0], *(player_id for player_id, _ in searches))


async def fuzz(
    platform: Platform, rounds: int, seed: int, stream_deadline_s: float = 3.0, boundaries: bool = True
) -> Fuzzer:
    fuzzer = Fuzzer(random.Random(seed), stream_deadline_s)
    targets = [(address, True) for address in platform.gateway_addresses]
    targets += [(addresses[0], False) for addresses in platform.rules_addresses.values()]
    for address, is_gateway in targets:
        async with grpc.aio.insecure_channel(address) as channel:
            # Rules services: with the internal secret, so the fuzz reaches their handlers (without it
            # every call is refused before any handler runs: tests/gateway/security/test_security_e2e.py).
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
            ending: list[Coroutine[Any, Any, None]] = []
            if boundaries:
                real_ids = await live_game(channel) if is_gateway else ()
                if is_gateway:  # a fresh session: a random SignOut above may have ended the first
                    session = (await accounts.SignInAsGuest(play_pb2.SignInAsGuestRequest())).session
                    token = (("authorization", f"Bearer {session.token}"),)
                for service in services(is_gateway):
                    for method in service.methods:
                        # SignOut ends the session the other calls use: its boundaries go last.
                        (ending if method.name == "SignOut" else calls).extend(
                            fuzzer.boundaries(channel, method, token, real_ids)
                        )
            # Concurrently, in bounded batches: a valid watch legitimately stays open until its
            # deadline, and one at a time those deadlines added up to minutes.
            for batch in (calls, ending):
                for start in range(0, len(batch), 64):
                    await asyncio.gather(*batch[start : start + 64])
    for child in platform.children:
        if child.process.poll() is not None:
            fuzzer.problems.append(f"{child.name} exited with {child.process.returncode}")
    return fuzzer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60, help="requests per method per server")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--stream-deadline", type=float, default=3.0, help="seconds a stream may stay open")
    parser.add_argument("--no-boundaries", action="store_true", help="only the random requests")
    args = parser.parse_args(argv)
    platform = Platform(fixed_ports=False, bot_pool=False).start()
    try:
        fuzzer = asyncio.run(fuzz(platform, args.rounds, args.seed, args.stream_deadline, not args.no_boundaries))
    finally:
        platform.stop()
    print(f"{fuzzer.calls} hostile requests; codes: " + ", ".join(f"{k} {v}" for k, v in fuzzer.codes.most_common()))
    for problem in fuzzer.problems[:50]:
        print("PROBLEM", problem)
    return 1 if fuzzer.problems else 0


if __name__ == "__main__":
    sys.exit(main())
