"""The gateway's settings: read once from the environment, a bad value refused at the start."""

from __future__ import annotations

import pytest

from gateway.settings import GatewaySettings
from kit.settings import ConfigError

BASE = {"REDIS_URL": "redis://127.0.0.1:1/0", "TAFEL_TOKEN_SECRET": "s" * 20}


def test_settings_read_once_and_fail_fast() -> None:
    settings = GatewaySettings.from_env({**BASE, "TAFEL_RULES_CONNECT4": "10.0.0.1:50061, 10.0.0.2:50061"})
    assert settings.rules["connect4"] == ("10.0.0.1:50061", "10.0.0.2:50061")
    assert settings.server.port == 50051 and settings.per_move_s == 60.0
    assert "plus4" not in GatewaySettings.from_env({**BASE, "TAFEL_RULES_PLUS4": "off"}).rules
    for bad in (
        {"TAFEL_TOKEN_SECRET": "s" * 20},
        {"REDIS_URL": "redis://x"},
        {**BASE, "TAFEL_TOKEN_SECRET": "short"},
        {**BASE, "TAFEL_RULES_CONNECT4": "no-port"},
        {**BASE, "TAFEL_RULES_CONNECT4": "a:1,a:1"},
        {**BASE, "TAFEL_PER_MOVE_S": "soon"},
        {**BASE, "TAFEL_MIN_PER_MOVE_S": "100", "TAFEL_MAX_PER_MOVE_S": "10"},
    ):
        with pytest.raises(ConfigError):
            GatewaySettings.from_env(bad)
