"""Who may read and write a chat channel, decided from what GetGame, GetRoom and GetTournament read:
the game's metadata (or its record once the live keys are gone), the room, the tournament.

- GAME_PLAYERS: its players only, during and after the game (CHAT_CHANNEL_NOT_FOUND to anyone
  else: no more than GetGame reveals).
- GAME_SPECTATORS: read by anyone who may watch the game (a private room's game: its players);
  written by those who do not play in it while it runs.
- ROOM: read by anyone with the code; written by its seated players.
- TOURNAMENT: read by anyone; written by its participants, its organiser and the directors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import grpc
from tafel.play.v1 import social_pb2

from gateway.chat.model import Channel, not_found
from gateway.games import GameDirectory
from gateway.records import Records, visible_to
from gateway.rooms import Rooms
from gateway.tournaments.store import TournamentStore
from kit.errors import Refused

S = social_pb2


@dataclass(frozen=True)
class Access:
    can_write: bool
    why_not: str = ""  # what a writer is told when can_write is false


class ChatAccess:
    def __init__(
        self,
        directory: GameDirectory,
        records: Records,
        rooms: Rooms,
        tournaments: TournamentStore,
        director: Callable[[str], bool],
    ) -> None:
        self.directory = directory
        self.records = records
        self.rooms = rooms
        self.tournaments = tournaments
        self.director = director

    async def decide(self, channel: Channel, viewer: str) -> Access:
        """What `viewer` may do in the channel; CHAT_CHANNEL_NOT_FOUND when they may not read it."""
        if channel.is_game:
            return await self._game(channel, viewer)
        if channel.kind == S.CHAT_CHANNEL_KIND_ROOM:
            try:
                room = await self.rooms.get(channel.owner)
            except Refused as refused:
                if refused.code == grpc.StatusCode.NOT_FOUND:
                    raise not_found() from None
                raise
            seated = any(p.player_id == viewer for p in room.players)
            return Access(seated, "" if seated else "only the players seated in the room write in its chat")
        loaded = await self.tournaments.load(channel.owner)
        if loaded is None:
            raise not_found()
        writes = (
            any(p[0] == viewer for p in loaded.players) or loaded.spec.organiser[0] == viewer or self.director(viewer)
        )
        return Access(writes, "" if writes else "only the tournament's participants and directors write in its chat")

    async def _game(self, channel: Channel, viewer: str) -> Access:
        players: set[str]
        running = False
        try:
            meta = await self.directory.meta(channel.owner)
        except Refused as refused:
            if refused.code != grpc.StatusCode.NOT_FOUND:
                raise
            try:
                record = await self.records.get(channel.owner)
            except Refused as missing:
                if missing.code == grpc.StatusCode.NOT_FOUND:
                    raise not_found() from None
                raise
            if not visible_to(record, viewer):
                raise not_found() from None
            players = {seat.player.player_id for seat in record.players}
        else:
            if not meta.visible_to(viewer):
                raise not_found() from None
            players = {p[0] for p in meta.players}
            if channel.kind == S.CHAT_CHANNEL_KIND_GAME_SPECTATORS and viewer not in players:
                running = not await self.records.exists(channel.owner)
        plays = viewer in players
        if channel.kind == S.CHAT_CHANNEL_KIND_GAME_PLAYERS:
            if not plays:
                raise not_found()
            return Access(True)
        if plays:
            return Access(False, "players write in their own channel; the spectators' is for those who watch")
        return Access(running, "" if running else "the game is over; its spectators' chat is closed")
