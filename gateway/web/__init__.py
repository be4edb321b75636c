"""The web edge: the public API (tafel.play.v1) over the Connect protocol and gRPC-Web, on
HTTP/1.1 and HTTP/2, served in the gateway's own process by the same servicer code the native gRPC
server runs (see gateway/web/README.md)."""
