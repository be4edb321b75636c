"""The web edge's configuration, read from the environment once (the gateway reads the rest).

- ``TAFEL_WEB_PORT``: the edge's HTTP port; unset = no edge, ``0`` = any free port (tests).
- ``TAFEL_WEB_HOST``: the address it binds (default: the gateway's ``TAFEL_HOST``).
- ``TAFEL_WEB_ORIGINS``: comma-separated browser origins allowed by CORS, e.g.
  ``http://localhost:5173``; ``*`` = any origin; unset = none (same-origin pages only).
- ``TAFEL_WEB_STATIC``: a folder served at ``/`` for the browser app (unset = ``clients/web/dist``
  when that folder exists).
- ``TAFEL_WEB_MAX_BODY_BYTES``: the largest request message (default: ``TAFEL_MAX_MESSAGE_BYTES``).
- ``TAFEL_WEB_TLS_CERT`` / ``TAFEL_WEB_TLS_KEY``: PEM files for HTTPS (default: the gateway's
  ``TAFEL_TLS_CERT`` / ``TAFEL_TLS_KEY``; neither = plain HTTP, as `make run` on loopback). Browsers
  present no client certificate, so the edge asks for none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kit.settings import ConfigError, Env

DEFAULT_STATIC = Path(__file__).resolve().parents[2] / "clients" / "web" / "dist"


@dataclass(frozen=True)
class WebSettings:
    port: int | None
    host: str = "127.0.0.1"
    origins: tuple[str, ...] = ()
    static_dir: Path | None = None
    max_body_bytes: int = 1 << 20
    tls_cert: Path | None = None
    tls_key: Path | None = None

    @property
    def scheme(self) -> str:
        return "https" if self.tls_cert is not None else "http"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WebSettings:
        env = Env(environ)
        raw_port = env.text("TAFEL_WEB_PORT", "").strip()
        port = env.integer("TAFEL_WEB_PORT", 0, 0, 65535) if raw_port else None
        origins = tuple(o.strip().rstrip("/") for o in env.text("TAFEL_WEB_ORIGINS", "").split(",") if o.strip())
        for origin in origins:
            if origin != "*" and not origin.startswith(("http://", "https://")):
                raise ConfigError(f"TAFEL_WEB_ORIGINS lists {origin!r}; an origin is http(s)://host[:port] or *")
        static = env.text("TAFEL_WEB_STATIC", "").strip()
        static_dir = Path(static) if static else (DEFAULT_STATIC if DEFAULT_STATIC.is_dir() else None)
        if static_dir is not None and not static_dir.is_dir():
            raise ConfigError(f"TAFEL_WEB_STATIC={static!r} is not a folder")
        max_message = env.integer("TAFEL_MAX_MESSAGE_BYTES", 1 << 20, 1024, 64 << 20)
        cert = env.text("TAFEL_WEB_TLS_CERT", env.text("TAFEL_TLS_CERT", "")).strip()
        key = env.text("TAFEL_WEB_TLS_KEY", env.text("TAFEL_TLS_KEY", "")).strip()
        if bool(cert) != bool(key):
            raise ConfigError("the web edge's TLS certificate and key are set together or not at all")
        for name, path in (("certificate", cert), ("key", key)):
            if path and not Path(path).is_file():
                raise ConfigError(f"the web edge's TLS {name} file {path!r} does not exist")
        return cls(
            port=port,
            host=env.text("TAFEL_WEB_HOST", env.text("TAFEL_HOST", "127.0.0.1")),
            origins=origins,
            static_dir=static_dir,
            max_body_bytes=env.integer("TAFEL_WEB_MAX_BODY_BYTES", max_message, 1024, 64 << 20),
            tls_cert=Path(cert) if cert else None,
            tls_key=Path(key) if key else None,
        )
