"""How to show a player: a bot as a bot with its level (the platform marks it: Player.bot), else the
display name they chose, else their username."""

from __future__ import annotations

from tafel.i18n import _
from tafel.play.v1 import play_pb2


def player_name(player: play_pb2.Player | None, fallback: str = "") -> str:
    """ "Bot (level 2)", "Jörg de Vries" or "guest-2b0a23b2" ("Bot (Stufe 2)" in German)."""
    fallback = fallback or _("someone")
    if player is None:
        return fallback
    if player.bot:
        return _("Bot (level {level})").format(level=player.bot_level) if player.bot_level else _("Bot")
    return player.display_name or player.username or fallback
