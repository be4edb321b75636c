"""A protoc plugin for gRPC's Python stubs, so `buf generate` (buf.gen.yaml) makes all of gen/.

gRPC ships its Python generator only inside grpc_tools' protoc, not as a plugin binary, and buf
can run protoc built-ins only for protobuf's own languages. This plugin takes buf's request (the
files and every descriptor they import), hands the descriptors to grpc_tools' protoc with
--grpc_python_out, and answers with what it wrote."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from google.protobuf import descriptor_pb2
from google.protobuf.compiler import plugin_pb2


def main() -> int:
    request = plugin_pb2.CodeGeneratorRequest.FromString(sys.stdin.buffer.read())
    response = plugin_pb2.CodeGeneratorResponse(
        supported_features=plugin_pb2.CodeGeneratorResponse.FEATURE_PROTO3_OPTIONAL
    )
    with tempfile.TemporaryDirectory() as folder:
        descriptors = Path(folder) / "descriptors.binpb"
        descriptors.write_bytes(descriptor_pb2.FileDescriptorSet(file=request.proto_file).SerializeToString())
        out = Path(folder) / "out"
        out.mkdir()
        done = subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", f"--descriptor_set_in={descriptors}",
             f"--grpc_python_out={out}", *request.file_to_generate],
            capture_output=True, text=True,
        )
        if done.returncode != 0:
            response.error = done.stderr.strip() or "grpc_tools.protoc failed"
        else:
            for path in sorted(out.rglob("*.py")):
                response.file.add(name=str(path.relative_to(out)), content=path.read_text())
    sys.stdout.buffer.write(response.SerializeToString())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
