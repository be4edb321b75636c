"""The clients' side of correspondence searches that outlive their stream: the Python
SDK's find_match_updates left early keeps a 3-day search queued, list_my_searches shows it and
cancel_search withdraws it (idempotent, and answering a paired search's game); the terminal's
`tafel search` lists it and `tafel search cancel connect4` withdraws it, driven as a person would
(tmux), in English and in Dutch."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from tafel.client import TafelClient

from tests.clients.tmux import TAFEL, Terminal, client_env, needs_tmux
from tools.platform import Platform

PASSWORD = "correct horse battery"


async def account(address: str, prefix: str) -> TafelClient:
    client = await TafelClient.connect(address)
    await client.register(f"{prefix}{uuid.uuid4().hex[:6]}", PASSWORD)
    return client


async def queued_and_left(client: TafelClient, days: int) -> str:
    """A correspondence search whose stream is left after its first MatchQueued: its ticket id."""
    updates = client.find_match_updates("connect4", days_per_move=days)
    try:
        update = await anext(updates)
        assert update.WhichOneof("status") == "queued", update
        return update.queued.ticket_id
    finally:
        await updates.aclose()  # type: ignore[attr-defined]


async def test_the_sdk_lists_and_cancels_a_search_that_outlived_its_stream(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    ann, ben = await account(address, "ann"), await account(address, "ben")
    try:
        ticket = await queued_and_left(ann, 3)
        await asyncio.sleep(0.3)
        (waiting,) = await ann.list_my_searches()
        assert waiting.ticket_id == ticket and waiting.time_control.days_per_move == 3 and waiting.game == "connect4"
        cancelled = await ann.cancel_search("connect4")
        assert cancelled.cancelled and not cancelled.game_id
        assert await ann.list_my_searches() == []
        assert not (await ann.cancel_search("connect4")).cancelled

        # Left again, then paired by ben's search: the cancel comes too late and names the game.
        await queued_and_left(ann, 3)
        await asyncio.sleep(0.3)
        found = await ben.find_match("connect4", days_per_move=3)
        late = await ann.cancel_search("connect4")
        assert not late.cancelled and late.game_id == found.game_id
    finally:
        await ann.close()
        await ben.close()


@needs_tmux
async def test_the_terminal_lists_and_cancels_searches(platform: Platform, tmp_path: Path) -> None:
    address = platform.gateway_addresses[0]
    cas = await account(address, "cas")
    env = client_env(
        address, TAFEL_USER=cas.player.username, TAFEL_PASSWORD=PASSWORD, TAFEL_CONFIG=str(tmp_path / "config.json")
    )

    async def run(command: str, *wanted: str, lang: str = "C") -> str:
        # The language from LANG, as a person's shell gives it (--lang would be remembered).
        terminal = Terminal(f"{TAFEL} {command}", {**env, "LANG": f"{lang}.UTF-8"}, width=160)
        try:
            return await asyncio.to_thread(terminal.wait_all, "EXITED 0", *wanted)
        finally:
            terminal.close()

    try:
        await run("search", "no searches waiting")
        await queued_and_left(cas, 5)
        await asyncio.sleep(0.3)
        screen = await run("search list", "your open correspondence searches", "Connect Four", "5 days a move")
        assert "in 6 days 23 hours" in screen or "in 7 days" in screen, screen
        await run("search", "openstaande zoekopdrachten", "5 dagen per zet", lang="nl_NL")
        await run("search cancel connect4", "your search for Connect Four is cancelled")
        assert await cas.list_my_searches() == []
        await run("search cancel connect4", "geen openstaande zoekopdracht", lang="nl_NL")
    finally:
        await cas.close()
