"""The load generator's smoke tests run against the whole platform, as the client tests do."""

from tests.platforms import platform_fixture

platform = platform_fixture()

__all__ = ["platform"]
