"""PlayStream.find_and_watch: the SDK's search that starts the game's watch (FindMatchRequest.watch),
through the whole platform. Two players find each other and play a game to the end with no watch
request of their own (what each stream sends and receives for the game's start is counted); a bot
(`tafel bot`'s loop) and play_game on a stream kept across games do the same."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tafel.autoplay import play_game
from tafel.botplay import run_bot, strategy_for
from tafel.client import TafelClient
from tafel.connect4.v1 import connect4_pb2
from tafel.play.v1 import play_pb2
from tafel.play_stream import PlayStream
from tafel.requests import is_after

from tools.platform import Platform


class CountingStream(PlayStream):
    """A play stream that keeps every message it sends and receives (batches unopened)."""

    def __init__(self, client: TafelClient) -> None:
        super().__init__(client)
        self.sent: list[play_pb2.PlayRequest] = []
        self.received: list[play_pb2.PlayResponse] = []

    async def _write(self, call: Any) -> None:
        stream = self

        class Recording:
            async def write(self, request: play_pb2.PlayRequest) -> None:
                stream.sent.append(request)
                await call.write(request)

        await super()._write(Recording())

    def _dispatch(self, response: play_pb2.PlayResponse) -> None:
        if not self._opening_batch:  # a batch's items come back here one by one: counted once
            self.received.append(response)
        self._opening_batch += 1
        try:
            super()._dispatch(response)
        finally:
            self._opening_batch -= 1

    _opening_batch = 0


def kinds(message: play_pb2.PlayResponse) -> list[str]:
    if message.WhichOneof("kind") == "batch":
        return [str(r.WhichOneof("kind")) for r in message.batch.responses]
    return [str(message.WhichOneof("kind"))]


async def play(stream: PlayStream, game_id: str, seat: int, watching: play_pb2.GetGameResponse) -> list[str]:
    """Column by column until the game ends; the event ids this seat's stream delivered."""
    status, seen = watching.summary.status, [watching.last_event_id]
    columns = iter([0, 1, 2, 3, 4, 5, 6] * 6)
    while not status.over:
        if seat in status.to_act:
            answer = await stream.submit_move(
                game_id, connect4_pb2.Move(column=next(columns)), expected_version=status.version
            )
            status = answer.status
            continue
        delivery = await stream.next_event(timeout=30)
        assert delivery.game_id == game_id and is_after(delivery.event.event_id, seen[-1])
        seen.append(delivery.event.event_id)
        if delivery.status.version >= status.version:
            status = delivery.status
    return seen


async def test_two_players_find_and_watch_and_play_to_the_end_without_a_watch_request(platform: Platform) -> None:
    players = [await TafelClient.connect(platform.gateway_addresses) for _ in range(2)]
    try:
        for client in players:
            await client.sign_in_as_guest()
        async with CountingStream(players[0]) as one, CountingStream(players[1]) as two:
            streams = [one, two]
            found = await asyncio.wait_for(
                asyncio.gather(*(s.find_and_watch("connect4", per_move_s=44) for s in streams)), 30
            )
            (first, _), (second, _) = found
            game_id = first.game_id
            assert second.game_id == game_id and {first.seat, second.seat} == {0, 1}
            assert first.watch_started and second.watch_started
            for matched, view in found:
                assert view.summary.game_id == game_id and view.seat == matched.seat
                assert view.summary.status.version == 0 and view.last_event_id == "0-1"
            for stream in streams:
                # Sent for the game's start: the options (once per stream) and the search; no watch.
                assert [r.WhichOneof("action") for r in stream.sent] == ["set_options", "find_match"]
                received = [kinds(m) for m in stream.received if "options_set" not in kinds(m)]
                assert ["match_update", "watching"] in [k[-2:] for k in received]  # one message
                assert len(received) <= 2  # MatchQueued, then MatchFound with the view

            seen = await asyncio.wait_for(
                asyncio.gather(*(play(s, game_id, m.seat, v) for s, (m, v) in zip(streams, found, strict=True))), 60
            )
            for stream in streams:
                assert not any(r.WhichOneof("action") == "watch" for r in stream.sent)
                # The watch ended with the game on the gateway; the SDK no longer resumes it either.
                assert game_id not in stream._last_event
            assert all(len(ids) > 1 for ids in seen)
    finally:
        for client in players:
            await client.close()


async def test_a_bot_and_a_player_each_play_a_game_on_a_stream_kept_across_games(
    platform: Platform, capsys: pytest.CaptureFixture[str]
) -> None:
    """run_bot (`tafel bot`) and play_game with a stream of the caller's: the search starts the
    watch, and the game is played with no watch request and no read before the first move."""
    bot_client, player = [await TafelClient.connect(platform.gateway_addresses) for _ in range(2)]
    try:
        for client in (bot_client, player):
            await client.sign_in_as_guest()
        bot = asyncio.ensure_future(run_bot(bot_client, "connect4", 1, 1))
        async with CountingStream(player) as stream:
            matched, watching = await asyncio.wait_for(stream.find_and_watch("connect4"), 30)
            outcome = await asyncio.wait_for(
                play_game(
                    player,
                    matched.game_id,
                    matched.seat,
                    strategy_for("connect4", 1, seed=5),
                    stream=stream,
                    watching=watching,
                ),
                120,
            )
            assert outcome.reason and (outcome.draw or outcome.winners)
            assert not any(r.WhichOneof("action") in ("watch", "stop_watching") for r in stream.sent)
            assert matched.game_id not in stream._last_event  # nothing left to resume or stop
            # The same stream takes the next search (its old game's events are not in the way).
            assert (await stream.ping(9)) == 9
        assert await asyncio.wait_for(bot, 30) == 0
        assert f"game {matched.game_id}: " in capsys.readouterr().out
    finally:
        for client in (bot_client, player):
            await client.close()


async def test_a_game_left_before_its_end_stops_its_watch_on_the_kept_stream(platform: Platform) -> None:
    """play_game on the caller's stream, cancelled while it waits for an opponent who never moves:
    the game's watch is stopped (the stream goes on to the next game without its events)."""
    players = [await TafelClient.connect(platform.gateway_addresses) for _ in range(2)]
    try:
        for client in players:
            await client.sign_in_as_guest()
        async with CountingStream(players[0]) as one, CountingStream(players[1]) as two:
            found = await asyncio.wait_for(asyncio.gather(one.find_and_watch("connect4"), two.find_and_watch("connect4")), 30)
            sides = list(zip(players, (one, two), found, strict=True))
            # The second to move plays; the first to move never does.
            sides.sort(key=lambda side: side[2][1].seat not in side[2][1].summary.status.to_act)
            (_, idle, (game, _)), (client, stream, (matched, watching)) = sides
            playing = asyncio.ensure_future(
                play_game(client, matched.game_id, matched.seat, strategy_for("connect4", 1, seed=3), stream=stream, watching=watching)
            )
            await asyncio.sleep(0.5)  # (a margin: it waits on a first move that never comes)
            assert not playing.done()
            playing.cancel()
            with pytest.raises(asyncio.CancelledError):
                await playing
            stopped = [r.stop_watching.game_id for r in stream.sent if r.WhichOneof("action") == "stop_watching"]
            assert stopped == [matched.game_id] and matched.game_id not in stream._last_event
            assert (await stream.ping(4)) == 4  # the stream is still open for the next game
            await idle.resign(game.game_id)
    finally:
        for client in players:
            await client.close()
