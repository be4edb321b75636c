"""A spectator in Chromium: two Python SDK bots play Connect Four (found through matchmaking); the
browser opens it from the lobby's live-games list, sees every move arrive, reloads mid-game and
carries on, then replays the finished game from its record: forward, back and jump. A finished Plus
4 game's replay draws each step's frame as the server's push events report it."""

from __future__ import annotations

import asyncio
import threading

from playwright.sync_api import Browser, Page, expect
from tafel.client import TafelClient
from tafel.games.v1 import games_pb2

from tests.web_app.app import TIMEOUT_MS, sign_in_as_guest
from tests.web_app.conftest import SCREENSHOTS
from tests.web_app.sdk_bots import SdkBots
from tools.platform import Platform


def test_watch_a_live_game_then_replay_it(browser: Browser, web_url: str, platform: Platform) -> None:
    bots = SdkBots(platform.gateway_addresses, "", "connect4", count=2, think_s=0.4)
    assert bots.matched.wait(30), "the SDK bots found no match"
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    sign_in_as_guest(page, web_url)
    live = page.locator(f"ul.live a[href='#/game/{bots.game_id}']")
    expect(live).to_be_visible(timeout=TIMEOUT_MS)
    live.click()
    expect(page.locator(".game h2")).to_contain_text("(watching)", timeout=TIMEOUT_MS)
    expect(page.locator(".turn")).to_contain_text("Waiting for", timeout=TIMEOUT_MS)
    dropped = page.locator(".moves li", has_text="dropped a disc")
    expect(dropped.nth(1)).to_be_visible(timeout=TIMEOUT_MS)
    seen = dropped.count()
    page.reload()  # mid-game: the watch starts again from the first event, nothing missed
    expect(page.locator("svg.board.connect4")).to_be_visible(timeout=TIMEOUT_MS)
    page.wait_for_function("(n) => document.querySelectorAll('.moves li').length > n", arg=seen, timeout=TIMEOUT_MS)
    expect(page.locator(".result")).to_be_visible(timeout=60_000)
    bots.join()
    total = dropped.count()
    assert total == bots.moves, f"the page shows {total} moves, the bots made {bots.moves}"
    assert page.locator("svg.board.connect4 .disc:not(.empty)").count() == bots.moves

    page.locator(".result a", has_text="Replay this game").click()
    counter = page.locator(".replay-controls .step")
    expect(counter).to_have_text(f"step 0 of {bots.moves}", timeout=TIMEOUT_MS)
    discs = page.locator("svg.board.connect4 .disc:not(.empty)")
    expect(discs).to_have_count(0)
    page.get_by_role("button", name="Step forward").click()
    page.get_by_role("button", name="Step forward").click()
    expect(discs).to_have_count(2)
    page.get_by_role("button", name="Step back").click()
    expect(discs).to_have_count(1)
    page.locator(".replay-controls .jump").fill(str(bots.moves - 1))
    expect(discs).to_have_count(bots.moves - 1)
    page.get_by_role("button", name="Last step").click()
    expect(discs).to_have_count(bots.moves)
    expect(page.locator(".replay-moves li.current").last).to_contain_text("Game over")
    page.get_by_role("button", name="Step back").click()
    page.get_by_role("button", name="Step back").click()
    page.screenshot(path=SCREENSHOTS / "replay.png", full_page=True)
    context.close()


def _server_frames(addresses: list[str], game_id: str) -> list[list[list[str]]]:
    """Per step of the replay (one per game version, as the page groups them), the frame the
    server's events say the last push left: "." empty, "r"/"b" a disc of seat 0/1, upper case a
    bonus disc. Read with the Python SDK in its own thread (Playwright's sync API owns this one)."""
    by_version: dict[int, list[games_pb2.GameEvent]] = {}

    async def read() -> None:
        async with await TafelClient.connect(addresses) as client:
            await client.sign_in_as_guest()
            async for event in client.watch(game_id):
                by_version.setdefault(event.version, []).append(event)

    thread = threading.Thread(target=asyncio.run, args=(read(),))
    thread.start()
    thread.join(30)
    assert not thread.is_alive() and by_version, "the SDK could not read the game's events"
    frames: list[list[list[str]]] = []
    frame = [["."] * 4 for _ in range(4)]
    for version in sorted(by_version):
        for event in by_version[version]:
            if event.WhichOneof("kind") == "plus4" and event.plus4.WhichOneof("kind") == "disc_pushed":
                rows = event.plus4.disc_pushed.frame
                assert len(rows) == 4, "a push's event carries no frame"
                frame = [
                    [
                        "."
                        if not sq.HasField("disc")
                        else "rb"[sq.disc.colour].upper()
                        if sq.disc.bonus
                        else "rb"[sq.disc.colour]
                        for sq in row.squares
                    ]
                    for row in rows
                ]
        frames.append([list(row) for row in frame])
    return frames


def _drawn_frame(page: Page) -> list[list[str]]:
    cells: list[list[str]] = page.evaluate(
        """() => {
            const frame = [0, 1, 2, 3].map(() => [".", ".", ".", "."]);
            for (const d of document.querySelectorAll("svg.board.plus4 circle.disc:not(.empty)")) {
                const c = "rb"[Number(d.getAttribute("data-colour"))];
                frame[Number(d.getAttribute("data-row"))][Number(d.getAttribute("data-column"))] = d.hasAttribute("data-bonus") ? c.toUpperCase() : c;
            }
            return frame;
        }"""
    )
    return cells


def test_replay_a_plus4_game_draws_every_step_from_the_server_frames(
    browser: Browser, web_url: str, platform: Platform
) -> None:
    bots = SdkBots(platform.gateway_addresses, "", "plus4", count=2)
    assert bots.matched.wait(30), "the SDK bots found no match"
    bots.join(120)
    frames = _server_frames(list(platform.gateway_addresses), bots.game_id)
    last = len(frames) - 1
    assert last >= 6, f"a Plus 4 game of {last} steps"
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    sign_in_as_guest(page, web_url)
    page.goto(f"{web_url}/#/replay/{bots.game_id}")
    counter = page.locator(".replay-controls .step")
    expect(counter).to_have_text(f"step 0 of {last}", timeout=TIMEOUT_MS)
    expect(page.locator("svg.board.plus4")).to_be_visible(timeout=TIMEOUT_MS)
    drawn = [_drawn_frame(page)]
    assert drawn[0] == frames[0] == [["."] * 4] * 4
    for step in range(1, 7):
        page.get_by_role("button", name="Step forward").click()
        expect(counter).to_have_text(f"step {step} of {last}")
        drawn.append(_drawn_frame(page))
        assert drawn[step] == frames[step], f"step {step}: the page draws {drawn[step]}, the server says {frames[step]}"
        assert drawn[step] != drawn[step - 1], f"step {step} drew the same frame as the one before"
    # no disc can fall out in the first four pushes: one more disc per step
    assert [sum(c != "." for row in f for c in row) for f in drawn[:5]] == [0, 1, 2, 3, 4]
    page.get_by_role("button", name="Step back").click()
    expect(counter).to_have_text(f"step 5 of {last}")
    assert _drawn_frame(page) == frames[5]
    middle = last // 2
    page.locator(".replay-controls .jump").fill(str(middle))
    expect(counter).to_have_text(f"step {middle} of {last}")
    assert _drawn_frame(page) == frames[middle]
    page.get_by_role("button", name="Step back").click()
    expect(counter).to_have_text(f"step {middle - 1} of {last}")
    assert _drawn_frame(page) == frames[middle - 1]
    page.screenshot(path=SCREENSHOTS / "replay-plus4.png", full_page=True)
    page.get_by_role("button", name="Last step").click()
    expect(counter).to_have_text(f"step {last} of {last}")
    assert _drawn_frame(page) == frames[last]  # the server's final view agrees with its last push
    context.close()
