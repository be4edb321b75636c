"""Server reflection under both names clients ask for: grpc.reflection.v1 (what current grpcurl,
Postman and buf curl try first) and grpc.reflection.v1alpha (older tools).

grpcio-reflection ships only v1alpha. The v1 protocol is the same messages with the same field
numbers under another package, so one servicer answers both: v1 calls are served by the v1alpha
servicer through a generic handler (the bytes on the wire are identical), and the v1 file is
added to the descriptor pool (v1alpha's file with its package renamed) so that reflection can
describe the v1 service itself."""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

ALPHA_PACKAGE = "grpc.reflection.v1alpha"
V1_PACKAGE = "grpc.reflection.v1"
V1_SERVICE_NAME = f"{V1_PACKAGE}.ServerReflection"
V1_FILE = "grpc/reflection/v1/reflection.proto"


def ensure_v1_descriptor(pool: descriptor_pool.DescriptorPool) -> None:
    """Add grpc/reflection/v1/reflection.proto to `pool` (once): v1alpha's file, renamed."""
    try:
        pool.FindFileByName(V1_FILE)
        return
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    proto.name = V1_FILE
    proto.package = V1_PACKAGE
    proto.options.Clear()
    alpha_prefix, v1_prefix = f".{ALPHA_PACKAGE}.", f".{V1_PACKAGE}."

    def rename(type_name: str) -> str:
        return v1_prefix + type_name[len(alpha_prefix) :] if type_name.startswith(alpha_prefix) else type_name

    for message in proto.message_type:
        for field in message.field:
            if field.HasField("type_name"):  # assigning even "" would mark a scalar as typed
                field.type_name = rename(field.type_name)
    for service in proto.service:
        for method in service.method:
            method.input_type = rename(method.input_type)
            method.output_type = rename(method.output_type)
    pool.Add(proto)


def enable_reflection(service_names: Iterable[str], server: grpc.aio.Server) -> None:
    """Serve reflection v1 and v1alpha on `server`, listing `service_names` and both reflection
    services."""
    pool = descriptor_pool.Default()
    ensure_v1_descriptor(pool)
    names = (*service_names, reflection.SERVICE_NAME, V1_SERVICE_NAME)
    servicer = reflection.aio.ReflectionServicer(names, pool=pool)
    # v1alpha through its generated registration; v1 through the same servicer, same messages.
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE_NAME, {"ServerReflectionInfo": handler}),)
    )
