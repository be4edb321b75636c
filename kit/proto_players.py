"""Find and replace a player (a tafel.play.v1.Player by id) anywhere inside a message: an erased or
renamed account in stored records, reports and tournament events, whatever their shape."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

PLAYER_TYPE = "tafel.play.v1.Player"


def replace_player(message: Message, player_id: str, new: Message) -> bool:
    """Every Player in `message` (at any depth) whose player_id is `player_id` becomes `new`;
    True when one did."""
    changed = False
    for field, value in message.ListFields():
        field = cast_any(field)
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            values = [v for v in value.values() if isinstance(v, Message)]
        elif field.is_repeated:
            values = list(value)
        else:
            values = [value]
        for item in values:
            if item.DESCRIPTOR.full_name == PLAYER_TYPE:
                if cast_any(item).player_id == player_id:
                    item.CopyFrom(new)
                    changed = True
            elif replace_player(item, player_id, new):
                changed = True
    return changed


def cast_any(value: object) -> Any:
    """protobuf's stubs lack the descriptor attributes read here (label)."""
    return value
