"""Responses built once and shared: a live event's delivery is encoded once per gateway however
many local watchers it goes to, and batches are assembled from encodings without decoding them."""

from __future__ import annotations

from typing import Any

from tafel.play.v1 import play_pb2

from gateway.games import GameMeta
from gateway.watch.watcher import LiveBatch


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
        delivery.turn_deadline.FromMilliseconds(int((live.received + meta.per_move_s) * 1000))
    data = live.encoded[key] = response.SerializeToString()
    return data


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_BATCH_TAG = b"\x4a"  # PlayResponse.batch: field 9, length-delimited
_RESPONSES_TAG = b"\x0a"  # PlayResponseBatch.responses: field 1, length-delimited


def encode_batch(items: list[play_pb2.PlayResponse | bytes]) -> bytes:
    """A PlayResponse holding `items` in its batch, built from their encodings (live event
    deliveries are already encoded and shared, so they are never decoded again)."""
    parts = []
    for item in items:
        data = item if type(item) is bytes else item.SerializeToString()  # type: ignore[union-attr]
        parts.append(_RESPONSES_TAG + _varint(len(data)) + data)
    inner = b"".join(parts)
    return _BATCH_TAG + _varint(len(inner)) + inner


def encoded_or_message(message: Any) -> bytes:
    """Response serializer of the event streams: responses may come already encoded."""
    if type(message) is bytes:
        return message
    data: bytes = message.SerializeToString()
    return data
