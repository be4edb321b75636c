"""The rules pages in the browser app's languages, as the web edge serves them: clients/web/rules.mjs
(run by build.mjs) puts docs/rules/*.md into dist/rules/ as Markdown and HTML, and the edge's static
files answer /rules/<page>.<lang>.md and .html in UTF-8. Builds into a temporary folder and calls
the edge's ASGI app in process: no platform, no network."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from gateway.settings import WebSettings
from gateway.web.app import build_app

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "rules"


@pytest.fixture(scope="module")
def static(tmp_path_factory: pytest.TempPathFactory) -> Path:
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on PATH (the web app's build needs Node 20)")
    folder = tmp_path_factory.mktemp("web-static")
    (folder / "index.html").write_text("<!doctype html><title>tafel</title>")
    subprocess.run(
        [node, str(ROOT / "clients" / "web" / "rules.mjs"), str(RULES), str(folder / "rules")], check=True, timeout=60
    )
    return folder


@pytest.fixture
async def http(static: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = build_app([], WebSettings(port=0, static_dir=static))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://edge") as client:
        yield client


async def test_the_dutch_connect_four_page_is_served_as_markdown(http: httpx.AsyncClient) -> None:
    page = await http.get("/rules/connect-four.nl.md")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/markdown; charset=utf-8"
    assert page.text == (RULES / "connect-four.nl.md").read_text(encoding="utf-8")
    assert page.text.startswith("# Vier op een rij")


async def test_every_page_in_every_language_is_served_as_html(http: httpx.AsyncClient) -> None:
    index = (await http.get("/rules/index.json")).json()
    assert index == {
        path.name.removesuffix(".md"): ["en", "nl", "de"] for path in RULES.glob("*.md") if path.name.count(".") == 1
    }
    for name, langs in index.items():
        for lang in langs:
            file = f"{name}.html" if lang == "en" else f"{name}.{lang}.html"
            page = await http.get(f"/rules/{file}")
            assert page.status_code == 200, file
            assert page.headers["content-type"] == "text/html; charset=utf-8"
            assert f'<html lang="{lang}">' in page.text
            # The language line links the other two pages' HTML, not their Markdown.
            others = [f"{name}.html" if other == "en" else f"{name}.{other}.html" for other in langs if other != lang]
            assert all(f'href="{other}"' in page.text for other in others), (file, others)
    german = (await http.get("/rules/connect-four.de.html")).text
    assert '<h1 id="vier-gewinnt-connect-four">Vier gewinnt (Connect Four)</h1>' in german
    assert "<code>FOUR_IN_A_ROW</code>" in german and "unentschieden" in german


async def test_a_page_that_is_not_there_is_404(http: httpx.AsyncClient) -> None:
    assert (await http.get("/rules/connect-four.fr.md")).status_code == 404
