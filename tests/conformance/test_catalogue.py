"""The catalogue answers without a token (a client learns what it can play before signing in),
and names each game's rules page, which exists in docs/rules/ and is about that game."""

from __future__ import annotations

from pathlib import Path

import grpc
from tafel.play.v1 import play_pb2, play_pb2_grpc

from tools.platform import Platform

ROOT = Path(__file__).resolve().parents[2]
TITLES = {"connect4": "Connect Four", "plus4": "Plus 4", "coloursquare": "Colour Square"}


async def test_the_catalogue_answers_without_a_token_and_links_each_rules_page(client_platform: Platform) -> None:
    async with grpc.aio.insecure_channel(client_platform.gateway_addresses[0]) as channel:
        listed = await play_pb2_grpc.LobbyServiceStub(channel).ListGameTypes(
            play_pb2.ListGameTypesRequest(), timeout=10
        )
    urls = {t.game: t.rules_url for t in listed.game_types}
    assert set(urls) == set(TITLES)
    for game, url in urls.items():
        assert url.startswith("docs/rules/") and url.endswith(".md"), url
        page = (ROOT / url).read_text(encoding="utf-8")
        assert page.startswith(f"# {TITLES[game]}"), (game, page[:80])
