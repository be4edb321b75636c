"""The web edge's configuration, read from the environment once (the gateway reads the rest).

- ``TAFEL_WEB_PORT``: the edge's HTTP port; unset = no edge, ``0`` = any free port (tests).
- ``TAFEL_WEB_HOST``: the address it binds (default: the gateway's ``TAFEL_HOST``).
- ``TAFEL_WEB_ORIGINS``: comma-separated browser origins allowed by CORS, e.g.
  ``http://localhost:5173``; ``*`` = any origin; unset = none (same-origin pages only).
- ``TAFEL_WEB_STATIC``: a folder served at ``/`` for the browser app (unset = ``clients/web/dist``
  when that folder exists).
- ``TAFEL_WEB_MAX_BODY_BYTES``: the largest request message (default: ``TAFEL_MAX_MESSAGE_BYTES``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from services.kit.settings import ConfigError, Env

DEFAULT_STATIC = Path(__file__).resolve().parents[2] / "clients" / "web" / "dist"


@dataclass(frozen=True)
class WebSettings:
    port: int | None
    host: str = "127.0.0.1"
    origins: tuple[str, ...] = ()
    static_dir: Path | None = None
    max_body_bytes: int = 1 << 20

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
        return cls(
            port=port,
            host=env.text("TAFEL_WEB_HOST", env.text("TAFEL_HOST", "127.0.0.1")),
            origins=origins,
            static_dir=static_dir,
            max_body_bytes=env.integer("TAFEL_WEB_MAX_BODY_BYTES", max_message, 1024, 64 << 20),
        )
