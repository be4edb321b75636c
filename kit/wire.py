"""Protobuf messages joined from already-encoded parts (kit/handlers.py: gRPC methods that send them).

Protobuf's wire format is a sequence of tagged fields: a message's encoding is its fields'
encodings one after another (a repeated field's is its elements', each with its tag), an embedded
message is its tag, its length and its bytes, and a parser merges whatever fields it meets in
whatever order. So a message whose parts are already encoded (the events a commit keeps in Redis,
the status beside them) is built by joining bytes, not by building a new message around copies of
the parts and encoding it all again. Fields here are proto3: a zero scalar is left out, as
protobuf's own encoder leaves it. What it saves a move, measured: services/host/encoded.py.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor

# Varints of 0-127 are one byte: the common case (versions, seats, lengths of small messages).
_ONE_BYTE = tuple(bytes((value,)) for value in range(128))

VARINT = 0
LENGTH_DELIMITED = 2


def varint(value: int) -> bytes:
    """The base-128 encoding of a non-negative integer."""
    if value < 128:
        return _ONE_BYTE[value]
    # Unrolled to five bytes (seconds and nanoseconds of a timestamp, lengths): a few of these a
    # move, where the loop below appended each byte through a method call.
    if value < 0x4000:
        return bytes((value & 0x7F | 0x80, value >> 7))
    if value < 0x200000:
        return bytes((value & 0x7F | 0x80, value >> 7 & 0x7F | 0x80, value >> 14))
    if value < 0x10000000:
        return bytes((value & 0x7F | 0x80, value >> 7 & 0x7F | 0x80, value >> 14 & 0x7F | 0x80, value >> 21))
    if value < 0x800000000:
        low = value & 0x7F | 0x80, value >> 7 & 0x7F | 0x80, value >> 14 & 0x7F | 0x80, value >> 21 & 0x7F | 0x80
        return bytes((*low, value >> 28))
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tag(field: int, wire_type: int) -> bytes:
    """A field's key: build it once per field, as a constant."""
    return varint(field << 3 | wire_type)


_LENGTH_DELIMITED_TYPES = (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES, FieldDescriptor.TYPE_MESSAGE)


def key_of(message_type: Any, field: str) -> bytes:
    """The key of a message type's field, by name, so the numbers stay the proto's: an integer or
    bool field's, or a length-delimited one's (messages, strings, bytes, packed repeated scalars)."""
    descriptor = message_type.DESCRIPTOR.fields_by_name[field]
    delimited = descriptor.type in _LENGTH_DELIMITED_TYPES or descriptor.is_packed
    return tag(descriptor.number, LENGTH_DELIMITED if delimited else VARINT)


def uint_field(key: bytes, value: int) -> bytes:
    """An unsigned integer (or bool) field, `key` from tag(field, VARINT); nothing for 0."""
    if not value:
        return b""
    # (The one-byte case inline: most values and lengths, ~20 a move in the rules service.)
    return key + (_ONE_BYTE[value] if value < 128 else varint(value))


def embedded(key: bytes, data: bytes) -> bytes:
    """A length-delimited field (an embedded message, bytes or a UTF-8 string), `key` from
    tag(field, LENGTH_DELIMITED). Present even when empty, as a set message field is."""
    size = len(data)
    return key + (_ONE_BYTE[size] if size < 128 else varint(size)) + data


def string_field(key: bytes, text: str) -> bytes:
    """A string (scalar) field, `key` from tag(field, LENGTH_DELIMITED); nothing when empty."""
    return embedded(key, text.encode()) if text else b""


_SECONDS = tag(1, VARINT)
_NANOS = tag(2, VARINT)


def timestamp(ms: int) -> bytes:
    """A google.protobuf.Timestamp of `ms` milliseconds since the epoch (ms >= 0)."""
    seconds, rest = divmod(ms, 1000)
    return uint_field(_SECONDS, seconds) + uint_field(_NANOS, rest * 1_000_000)


def timestamp_ns(ns: int) -> bytes:
    """A google.protobuf.Timestamp of `ns` nanoseconds since the epoch (ns >= 0)."""
    seconds, nanos = divmod(ns, 1_000_000_000)
    return uint_field(_SECONDS, seconds) + uint_field(_NANOS, nanos)
