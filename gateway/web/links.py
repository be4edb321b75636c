"""Plain-HTTP pages on the edge for the links in tafel's mails.

`/mail/unsubscribe?token=...`: a GET shows a one-button page (a link opened, or fetched by a mail
scanner, changes nothing); a POST stops that kind of mail: the page's button, and the RFC 8058
one-click POST mail clients send (`List-Unsubscribe-Post: List-Unsubscribe=One-Click`, body
`List-Unsubscribe=One-Click`). Both run EmailService.Unsubscribe's own handler from the edge's
method table, behind the same call limits, so the link and the RPC cannot differ. The confirmation
link goes to the web app (`#/email/confirm?token=...`), which calls ConfirmEmail itself."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any, NoReturn
from urllib.parse import parse_qs

import grpc
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.types import Receive, Scope, Send
from tafel.play.v1 import notices_pb2

from gateway.web.methods import Method

UNSUBSCRIBE_PATH = "/mail/unsubscribe"
UNSUBSCRIBE_METHOD = "/tafel.play.v1.EmailService/Unsubscribe"
MAX_FORM_BYTES = 4096

WORDS = {
    "en": {
        "title": "Unsubscribe",
        "ask": "Stop these mails from tafel?",
        "button": "Unsubscribe",
        "digest": "Done: no more daily digests go to this address.",
        "immediate": "Done: no more immediate mails go to this address.",
        "bad": "This link is unknown or no longer valid.",
        "busy": "This did not work just now; please try again in a moment.",
    },
    "nl": {
        "title": "Afmelden",
        "ask": "Wil je deze mails van tafel niet meer ontvangen?",
        "button": "Afmelden",
        "digest": "Gelukt: er gaan geen dagelijkse overzichten meer naar dit adres.",
        "immediate": "Gelukt: er gaan geen directe mails meer naar dit adres.",
        "bad": "Deze link is onbekend of niet meer geldig.",
        "busy": "Dat lukte nu niet; probeer het zo nog eens.",
    },
    "de": {
        "title": "Abmelden",
        "ask": "Diese Mails von tafel abbestellen?",
        "button": "Abbestellen",
        "digest": "Erledigt: an diese Adresse gehen keine täglichen Übersichten mehr.",
        "immediate": "Erledigt: an diese Adresse gehen keine sofortigen Mails mehr.",
        "bad": "Dieser Link ist unbekannt oder nicht mehr gültig.",
        "busy": "Das hat gerade nicht geklappt; versuche es gleich noch einmal.",
    },
}


class LinkRefused(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code


class LinkContext:
    """The servicer context of a link's call: no metadata (no session: the token is the proof),
    the caller's address for the per-peer limits."""

    def __init__(self, scope: Scope) -> None:
        client = scope.get("client")
        if not client:
            self._peer = "unknown"
        elif ":" in client[0]:
            self._peer = f"ipv6:[{client[0]}]:{client[1]}"  # as grpc names peers (limits.peer_host)
        else:
            self._peer = f"ipv4:{client[0]}:{client[1]}"

    def invocation_metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        return ()

    def time_remaining(self) -> float | None:
        return None

    def cancelled(self) -> bool:
        return False

    def peer(self) -> str:
        return self._peer

    async def send_initial_metadata(self, metadata: Sequence[tuple[str, str | bytes]]) -> None:
        """No headers of its own."""

    async def abort(
        self, code: grpc.StatusCode, details: str = "", trailing_metadata: Sequence[tuple[str, str | bytes]] = ()
    ) -> NoReturn:
        raise LinkRefused(code, details)


def _language(request: Request) -> str:
    wanted = request.query_params.get("lang", "") or request.headers.get("accept-language", "")
    for part in wanted.replace(" ", "").split(","):
        lang = part.split(";")[0].split("-")[0].lower()
        if lang in WORDS:
            return lang
    return "en"


def _page(lang: str, body: str, status: int = 200) -> HTMLResponse:
    words = WORDS[lang]
    return HTMLResponse(
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>tafel: {words['title']}</title>"
        "<style>body{font:1.1rem/1.5 system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}"
        "button{font:inherit;min-height:44px;padding:0 1.2rem}</style></head>"
        f"<body><h1>tafel</h1>{body}</body></html>",
        status_code=status,
        headers={"cache-control": "no-store", "referrer-policy": "no-referrer"},
    )


class MailLinks:
    def __init__(self, methods: list[Method]) -> None:
        found = [m for m in methods if m.path == UNSUBSCRIBE_METHOD]
        self.method = found[0] if found else None

    @staticmethod
    def serves(scope: Scope) -> bool:
        return bool(scope["type"] == "http" and scope.get("path", "") == UNSUBSCRIBE_PATH)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        response = await self._answer(request, scope)
        await response(scope, receive, send)

    async def _answer(self, request: Request, scope: Scope) -> Response:
        lang = _language(request)
        words = WORDS[lang]
        token = request.query_params.get("token", "")
        if request.method == "GET":
            if not token:
                return _page(lang, f"<p>{words['bad']}</p>", 404)
            action = html.escape(f"{UNSUBSCRIBE_PATH}?{request.url.query}", quote=True)
            return _page(
                lang,
                f"<p>{words['ask']}</p>"
                f'<form method="post" action="{action}"><button type="submit">{words["button"]}</button></form>',
            )
        if request.method != "POST":
            return PlainTextResponse("method not allowed", status_code=405, headers={"allow": "GET, POST"})
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            return PlainTextResponse("too large", status_code=413)
        # RFC 8058 puts the token in the URL; a form may carry it in the body too.
        token = token or (parse_qs(body.decode("utf-8", "replace")).get("token") or [""])[0]
        if self.method is None:
            return PlainTextResponse("not found", status_code=404)
        try:
            call = self.method.handler.unary_unary
            answer: Any = await call(notices_pb2.UnsubscribeRequest(token=token), LinkContext(scope))
        except LinkRefused as refused:
            if refused.code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
                return _page(lang, f"<p>{words['bad']}</p>", 404)
            status = 429 if refused.code == grpc.StatusCode.RESOURCE_EXHAUSTED else 503
            return _page(lang, f"<p>{words['busy']}</p>", status)
        return _page(lang, f"<p>{words.get(answer.stopped, words['digest'])}</p>")
