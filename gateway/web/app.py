"""The edge's ASGI application: the API at /<package>.<Service>/<Method> (connectrpc: Connect,
gRPC-Web and gRPC), the browser app's static files everywhere else, CORS for the configured
origins around both."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connectrpc._server_async import ConnectASGIApplication
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import PlainTextResponse
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.settings import WebSettings
from gateway.web.codecs import JsonCodec, ProtoCodec
from gateway.web.endpoints import endpoints_of
from gateway.web.links import MailLinks
from gateway.web.methods import Method

API_PREFIX = "/tafel."

# What a Connect or gRPC-Web client sends and must be able to read (connectrpc.com/docs/cors).
ALLOWED_HEADERS = (
    "authorization",
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "connect-content-encoding",
    "connect-accept-encoding",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
    "x-request-id",
)
EXPOSED_HEADERS = (
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
    "grpc-encoding",
    "connect-content-encoding",
    "content-encoding",
)


class ApiApplication(ConnectASGIApplication[Mapping[str, Any]]):
    """Every public service in one connectrpc application (the endpoint table carries the paths)."""

    @property
    def path(self) -> str:
        return "/"


class EdgeApplication:
    def __init__(self, api: ApiApplication, static: ASGIApp | None, links: MailLinks | None = None) -> None:
        self.api = api
        self.static = static
        self.links = links  # the pages behind the links in mails (gateway/web/links.py)
        self.not_found = PlainTextResponse("not found", status_code=404)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan" or scope.get("path", "").startswith(API_PREFIX):
            await self.api(scope, receive, send)
        elif self.links is not None and self.links.serves(scope):
            await self.links(scope, receive, send)
        elif scope["type"] == "http" and self.static is not None:
            try:
                await self.static(scope, receive, send)
            except HTTPException as error:  # StaticFiles raises its 404/405 for a middleware to answer
                await PlainTextResponse(error.detail, status_code=error.status_code)(scope, receive, send)
        else:
            await self.not_found(scope, receive, send)


def build_app(methods: list[Method], settings: WebSettings, compressions: tuple[Any, ...] | None = ()) -> ASGIApp:
    """`compressions` () = identity only: our messages are a few hundred bytes, where gzip costs
    more CPU than it saves bytes (browsers ask for gzip on every call); None = connectrpc's gzip."""
    api = ApiApplication(
        service=endpoints_of(methods),
        endpoints=lambda table: table,
        read_max_bytes=settings.max_body_bytes,
        codecs=[ProtoCodec(), JsonCodec()],
        compressions=compressions,
    )
    static = StaticFiles(directory=settings.static_dir, html=True) if settings.static_dir is not None else None
    app: ASGIApp = EdgeApplication(api, static, MailLinks(methods))
    if settings.origins:
        app = CORSMiddleware(
            app,
            allow_origins=list(settings.origins),
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=list(ALLOWED_HEADERS),
            expose_headers=list(EXPOSED_HEADERS),
            max_age=7200,
        )
    return app
