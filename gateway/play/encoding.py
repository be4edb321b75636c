"""Responses built once and shared: a live event's delivery is encoded once per gateway however
many local watchers it goes to, and batches are assembled from encodings without decoding them."""

from __future__ import annotations

from typing import Any

from tafel.play.v1 import play_pb2

from gateway.games import GameMeta
from gateway.watch.watcher import LiveBatch
from kit import wire


def set_time(target: Any, seconds: float | None) -> None:
    """Set a Timestamp field to `seconds` since the epoch (left unset for None)."""
    if seconds is not None:
        target.FromMilliseconds(int(seconds * 1000))


def live_delivery(live: LiveBatch, index: int, meta: GameMeta, play: bool) -> bytes:
    """The encoded Play (or WatchGame) response for a live event, built once per gateway and
    shared by every local watcher of the game. Its turn deadline is the batch's arrival plus the
    per-move time (see GameSteps.deadline_of)."""
    key = (play, index)
    data = live.encoded.get(key)
    if data is not None:
        return data
    batch = live.batch
    event = batch.events[index]
    response: play_pb2.PlayResponse | play_pb2.WatchGameResponse
    if play:
        response = play_pb2.PlayResponse()
        delivery: Any = response.event
        delivery.game_id = meta.game_id
    else:
        response = delivery = play_pb2.WatchGameResponse()
    delivery.event.CopyFrom(event)
    if batch.HasField("status") and batch.status.version == event.version:
        delivery.status.CopyFrom(batch.status)
    if event.WhichOneof("kind") != "ended":
        # What FromMilliseconds sets, without its range check in Python (a time just computed).
        deadline_ms = int((live.received + meta.per_move_s) * 1000)
        stamp = delivery.turn_deadline
        stamp.seconds = deadline_ms // 1000
        stamp.nanos = deadline_ms % 1000 * 1_000_000
    data = live.encoded[key] = response.SerializeToString()
    return data


_BATCH = wire.key_of(play_pb2.PlayResponse, "batch")
_RESPONSES = wire.key_of(play_pb2.PlayResponseBatch, "responses")


def encode_batch(items: list[play_pb2.PlayResponse | bytes]) -> bytes:
    """A PlayResponse holding `items` in its batch, built from their encodings (live event
    deliveries are already encoded and shared, so they are never decoded again)."""
    embedded = wire.embedded
    inner = b"".join(
        [embedded(_RESPONSES, item if type(item) is bytes else item.SerializeToString()) for item in items]  # type: ignore[union-attr]
    )
    return embedded(_BATCH, inner)
