"""The Python bot of docs/clients.md ("A bot in Python"), exactly as printed there, run as its own
process against the whole platform: a player challenges it, plays it, accepts the rematch it
offers and plays that game too, then declines the next one."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path

from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient
from tafel.events import AccountEventStream
from tafel.play.v1 import challenges_pb2 as C
from tafel.play.v1 import play_pb2

from tools.platform import Platform

DOCS = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
PASSWORD = "a long password for the bot"


def documented_bot() -> str:
    text = DOCS.read_text()
    section = text[text.index("### A bot in Python") :]
    start = section.index("```python\n") + len("```python\n")
    return section[start : section.index("\n```", start)] + "\n"


async def until(events: AccountEventStream, test: object, timeout_s: float = 30.0) -> C.AccountEvent:
    while True:
        event = await events.next_event(timeout_s)
        if test(event):  # type: ignore[operator]
            return event


def rematch_offered_in(game_id: str):  # type: ignore[no-untyped-def]
    return lambda e: (
        e.WhichOneof("kind") == "offer"
        and e.offer.game_id == game_id
        and e.offer.kind == play_pb2.OFFER_KIND_REMATCH
        and e.offer.status == play_pb2.OFFER_STATUS_PENDING
    )


async def test_the_documented_bot_accepts_plays_and_offers_a_rematch(platform: Platform, tmp_path: Path) -> None:
    address = platform.gateway_addresses[0]
    bot_name = f"bot{uuid.uuid4().hex[:8]}"
    async with await TafelClient.connect(address) as maker:
        await maker.register(bot_name, PASSWORD)
    script = tmp_path / "challenge_bot.py"
    script.write_text(documented_bot())
    env = {**os.environ, "TAFEL_SERVER": address, "TAFEL_USER": bot_name, "TAFEL_PASSWORD": PASSWORD}
    bot = await asyncio.create_subprocess_exec(
        sys.executable, str(script), env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    said: list[str] = []
    player = await TafelClient.connect(address)
    try:
        assert bot.stdout is not None
        async with asyncio.timeout(30):
            while not said or not said[-1].startswith("READY"):
                line = await bot.stdout.readline()
                assert line, f"the bot exited: {''.join(said)}"
                said.append(line.decode())
        await player.register(f"human{uuid.uuid4().hex[:8]}", "correct horse battery")
        async with player.event_stream() as events:
            made = await player.create_challenge("connect4", username=bot_name, per_move_s=30)
            accepted = await until(
                events,
                lambda e: (
                    e.challenge.challenge_id == made.challenge_id and e.challenge.status == C.CHALLENGE_STATUS_ACCEPTED
                ),
            )
            first = accepted.challenge.game_id
            await play_game(player, first, (await player.wait_for_game(first)).seat, strategy_for("connect4", 1))
            offered = await until(events, rematch_offered_in(first))
            assert offered.offer.by.player.username == bot_name
            second = (await player.answer_offer(first, "rematch", True)).new_game_id
            await play_game(player, second, (await player.wait_for_game(second)).seat, strategy_for("connect4", 1))
            await until(events, rematch_offered_in(second))
            declined = await player.answer_offer(second, "rematch", False)
            assert declined.status == play_pb2.OFFER_STATUS_DECLINED
        record = await player.get_record(first)
        assert [o.status for o in record.offers if o.kind == play_pb2.OFFER_KIND_REMATCH] == [
            play_pb2.OFFER_STATUS_ACCEPTED
        ]
        assert (await player.get_record(second)).outcome.reason
    finally:
        if bot.returncode is None:
            bot.terminate()
            await bot.wait()
        await player.close()
