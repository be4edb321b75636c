"""The edge's configuration: off unless asked for, origins checked, the static folder must exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.settings import WebSettings
from kit.settings import ConfigError


def test_the_edge_is_off_unless_a_port_is_given() -> None:
    assert WebSettings.from_env({}).port is None
    assert WebSettings.from_env({"TAFEL_WEB_PORT": "0"}).port == 0
    assert WebSettings.from_env({"TAFEL_WEB_PORT": "8080", "TAFEL_HOST": "0.0.0.0"}).host == "0.0.0.0"


def test_origins_and_caps_are_read_and_checked(tmp_path: Path) -> None:
    settings = WebSettings.from_env(
        {"TAFEL_WEB_PORT": "0", "TAFEL_WEB_ORIGINS": "http://localhost:5173/, https://tafel.example",
         "TAFEL_WEB_STATIC": str(tmp_path), "TAFEL_MAX_MESSAGE_BYTES": "2048"}
    )
    assert settings.origins == ("http://localhost:5173", "https://tafel.example")
    assert settings.static_dir == tmp_path and settings.max_body_bytes == 2048
    for bad in (
        {"TAFEL_WEB_PORT": "http"},
        {"TAFEL_WEB_PORT": "70000"},
        {"TAFEL_WEB_ORIGINS": "localhost:5173"},
        {"TAFEL_WEB_STATIC": str(tmp_path / "missing")},
        {"TAFEL_WEB_MAX_BODY_BYTES": "10"},
    ):
        with pytest.raises(ConfigError):
            WebSettings.from_env(bad)


def test_https_takes_the_gateways_certificate_or_its_own(tmp_path: Path) -> None:
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_text("x")
    key.write_text("y")
    assert WebSettings.from_env({"TAFEL_WEB_PORT": "0"}).scheme == "http"
    inherited = WebSettings.from_env({"TAFEL_WEB_PORT": "0", "TAFEL_TLS_CERT": str(cert), "TAFEL_TLS_KEY": str(key)})
    assert (inherited.scheme, inherited.tls_cert, inherited.tls_key) == ("https", cert, key)
    own = WebSettings.from_env({"TAFEL_WEB_TLS_CERT": str(cert), "TAFEL_WEB_TLS_KEY": str(key)})
    assert own.tls_cert == cert
    for bad in (
        {"TAFEL_WEB_TLS_CERT": str(cert)},
        {"TAFEL_WEB_TLS_CERT": str(cert), "TAFEL_WEB_TLS_KEY": str(tmp_path / "missing.pem")},
    ):
        with pytest.raises(ConfigError):
            WebSettings.from_env(bad)
