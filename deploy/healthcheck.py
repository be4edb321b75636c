"""The container health check: asks this container's server (its gRPC health service, on
$TAFEL_PORT) whether it is serving — the whole server, or the service named as the argument, e.g.
tafel.rules.v1.RulesService; exit 0 if so, 1 if not. Used by the Dockerfile's HEALTHCHECK
(and so by compose); Kubernetes uses its own gRPC probes (deploy/k8s).
$TAFEL_HEALTH_ADDRESS asks another server instead: the bot pool serves no port, and is of use only
while the gateway it serves is (compose.yaml)."""

from __future__ import annotations

import os
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def main() -> int:
    address = os.environ.get("TAFEL_HEALTH_ADDRESS") or f"127.0.0.1:{os.environ.get('TAFEL_PORT', '50060')}"
    with grpc.insecure_channel(address) as channel:
        try:
            request = health_pb2.HealthCheckRequest(service=sys.argv[1] if len(sys.argv) > 1 else "")
            answer = health_pb2_grpc.HealthStub(channel).Check(request, timeout=2.0)
        except grpc.RpcError as error:
            print(f"{address}: {error.code().name}", file=sys.stderr)
            return 1
    return 0 if answer.status == health_pb2.HealthCheckResponse.SERVING else 1


if __name__ == "__main__":
    raise SystemExit(main())
