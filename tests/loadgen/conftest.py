"""The load generator's smoke tests run against the whole platform, as the client tests do."""

from tests.clients.platform_fixture import platform

__all__ = ["platform"]
