"""Every server answers server reflection under v1 (what current tools try first) and v1alpha."""

from __future__ import annotations

import grpc
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2

from kit.reflection_v1 import V1_SERVICE_NAME
from kit.server import start_server
from kit.settings import ServerSettings


def settings() -> ServerSettings:
    return ServerSettings(
        host="127.0.0.1", port=0, redis_url="", metrics_port=0, log_level="INFO",
        max_message_bytes=1 << 20, max_concurrent_streams=100, max_pending_calls=100, grace_s=0.0,
    )  # fmt: skip


async def ask(
    channel: grpc.aio.Channel, package: str, request: reflection_pb2.ServerReflectionRequest
) -> reflection_pb2.ServerReflectionResponse:
    # A raw call by path: the v1 and v1alpha messages are the same bytes, only the path differs.
    call = channel.stream_stream(
        f"/{package}.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )(iter([request]))
    replies = [reply async for reply in call]
    assert len(replies) == 1
    return replies[0]


async def test_reflection_v1_and_v1alpha_list_the_services_and_describe_v1() -> None:
    running = await start_server(settings(), lambda server: None, ("tafel.example.v1.Nothing",))
    try:
        async with grpc.aio.insecure_channel(running.address) as channel:
            for package in ("grpc.reflection.v1", "grpc.reflection.v1alpha"):
                reply = await ask(channel, package, reflection_pb2.ServerReflectionRequest(list_services=""))
                names = {s.name for s in reply.list_services_response.service}
                assert {"tafel.example.v1.Nothing", "grpc.health.v1.Health", V1_SERVICE_NAME} <= names
                assert "grpc.reflection.v1alpha.ServerReflection" in names
            reply = await ask(
                channel,
                "grpc.reflection.v1",
                reflection_pb2.ServerReflectionRequest(file_containing_symbol=V1_SERVICE_NAME),
            )
            files = [
                descriptor_pb2.FileDescriptorProto.FromString(b)
                for b in reply.file_descriptor_response.file_descriptor_proto
            ]
            v1 = next(f for f in files if f.package == "grpc.reflection.v1")
            method = v1.service[0].method[0]
            assert (method.name, method.input_type) == (
                "ServerReflectionInfo",
                ".grpc.reflection.v1.ServerReflectionRequest",
            )
    finally:
        await running.server.stop(0)
