"""Request and response bodies on the edge, in google.protobuf messages (the classes in gen/ that
the servicers use): binary protobuf and Connect's JSON. A body that does not parse is refused with
INVALID_ARGUMENT, a readable message and ErrorInfo reason MALFORMED_REQUEST; responses the event
streams hand over already encoded pass through unchanged."""

from __future__ import annotations

from typing import Any

from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from google.rpc import error_details_pb2
from protobuf.wkt import Any as WireAny

from kit.errors import DOMAIN

MALFORMED = "MALFORMED_REQUEST"


def malformed(message: str) -> ConnectError:
    info = error_details_pb2.ErrorInfo(reason=MALFORMED, domain=DOMAIN)
    detail = WireAny(type_url=f"type.googleapis.com/{info.DESCRIPTOR.full_name}", value=info.SerializeToString())
    return ConnectError(Code.INVALID_ARGUMENT, message, [ErrorDetail(detail)])


class ProtoCodec:
    def name(self) -> str:
        return "proto"

    def encode(self, message: Any) -> bytes:
        if type(message) is bytes:
            return message
        data: bytes = message.SerializeToString()
        return data

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> Message:
        try:
            return message_class.FromString(bytes(data))
        except (DecodeError, ValueError, RuntimeError):
            raise malformed(f"the body is not a binary {message_class.DESCRIPTOR.full_name}") from None


class JsonCodec:
    def name(self) -> str:
        return "json"

    def encode(self, message: Any) -> bytes:
        return json_format.MessageToJson(message, indent=None).encode()

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> Message:
        message = message_class()
        try:
            json_format.Parse(bytes(data) or b"{}", message, ignore_unknown_fields=True)
        except (json_format.ParseError, ValueError, TypeError, RecursionError) as error:
            # The parser's reason names the field or the position, which is what a client needs.
            reason = str(error).splitlines()[0][:200] if str(error) else "not JSON"
            raise malformed(f"the body is not a JSON {message_class.DESCRIPTOR.full_name}: {reason}") from None
        return message
