"""Browser tests of the web app (clients/web) in Chromium from the machine's Debian packages,
driven by Playwright for Python (no browser download: `executable_path`). Without Chromium the
tests fail in CI (CI=true) and skip elsewhere with the reason."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from tools.platform import Platform

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("TAFEL_CHROMIUM", "/usr/bin/chromium"))
# Each run saves its boards under build/ (git-ignored), so a test run leaves the tree clean;
# TAFEL_SCREENSHOTS=docs/screenshots refreshes the pictures the README and docs show.
SCREENSHOTS = ROOT / os.environ.get("TAFEL_SCREENSHOTS", "build/screenshots")
SCREENSHOTS.mkdir(parents=True, exist_ok=True)

# The Python SDK (clients/python) for the bots that sit at a browser player's table.
_CLIENTS = ROOT / "clients" / "python"
if str(_CLIENTS) not in sys.path:
    sys.path.insert(0, str(_CLIENTS))
    _tafel = sys.modules.get("tafel")
    if _tafel is not None and str(_CLIENTS / "tafel") not in list(_tafel.__path__):
        _tafel.__path__.append(str(_CLIENTS / "tafel"))

from tests.platforms import platform_fixture  # noqa: E402

platform = platform_fixture()  # the whole platform, per module

__all__ = ["platform"]


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    if not CHROMIUM.exists():
        why = f"no Chromium at {CHROMIUM}: install it with `apt-get install -y chromium` (.ci/run does)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return CHROMIUM


@pytest.fixture(scope="session")
def built_app() -> Path:
    """The app built (`make web`: the SDK, then esbuild) before any gateway starts serving it."""
    subprocess.run(["make", "-s", "web"], cwd=ROOT, check=True, timeout=600)
    dist = ROOT / "clients" / "web" / "dist"
    assert (dist / "index.html").is_file() and (dist / "app.js").is_file()
    return dist


@pytest.fixture(scope="module")
def web_url(built_app: Path, platform: Platform) -> str:
    assert platform.web_urls, "the platform started no web edge"
    return platform.web_urls[0]


@pytest.fixture(scope="module")
def browser(chromium_path: Path) -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(chromium_path), args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()
