"""LobbyService: the game types on offer, matchmaking (FindMatch) and private rooms.

Every input is checked before anything is written: the game must be one this gateway routes to,
options must be that game's and within the ranges its rules service describes (DescribeGame), the
time control within the gateway's range, seat counts within the game's seat range, room codes
well formed. Options are made canonical (every default filled in) so that "unset" and "the
defaults spelled out" meet in the same matchmaking queue.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Protocol

import grpc
from google.protobuf import descriptor
from google.protobuf.message import Message
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2, play_pb2_grpc
from tafel.rules.v1 import rules_pb2

from gateway.auth import PlayerSource
from gateway.bot_requests import BOT_REQUEST_HEADER, as_bot, settle_joined
from gateway.catalogue import Catalogue
from gateway.matchmaking.matchmaker import Matchmaker
from gateway.matchmaking.model import BucketSpec, Leaving
from gateway.matchmaking.ports import GameStarter, RatingSource
from gateway.matchmaking.ratings_source import HashRatings
from gateway.rooms import Rooms, normalize_code
from gateway.settings import MatchmakingSettings, RoomSettings
from gateway.timecontrol import DAY_MS, DAYS_PER_MOVE
from kit.errors import Refused, abort, invalid, refusing
from kit.ids import check_id
from kit.redis.layer import RedisLayer
from kit.redis.pubsub import PubSub

log = logging.getLogger("tafel.gateway.lobby")
MAX_GAME_NAME = 64
_BUCKETS_KEPT = 256  # the buckets searches asked for lately (lobby's _bucket_of)
_BucketKey = tuple[str, bytes, int, int, bytes]  # game, options, seats min and max, time control
# Every lobby handler: refusals as their status, a Redis failure UNAVAILABLE, a bug INTERNAL.
lobby_call = refusing("the lobby's storage is unavailable; retry", internal="the lobby failed to answer; retry")

# ---------------------------------------------------------------------------------------------
# What the lobby needs from the rest of the gateway


class LobbySettings(Protocol):
    @property
    def per_move_s(self) -> float: ...

    @property
    def min_per_move_s(self) -> float: ...

    @property
    def max_per_move_s(self) -> float: ...


# ---------------------------------------------------------------------------------------------
# Validation


def check_game(catalogue: Catalogue, game: str) -> None:
    if not game:
        raise invalid("GAME_MISSING", "name the game to play (see ListGameTypes)", field="game")
    if len(game) > MAX_GAME_NAME or not catalogue.offers(game):
        shown = game[:MAX_GAME_NAME]
        raise invalid("UNKNOWN_GAME", f"there is no game type {shown} here (see ListGameTypes)", field="game")


def _enum_value_for(field: Any, choice: str) -> int | None:
    wanted = choice.lower()
    for value in field.enum_type.values:
        name = value.name.lower()
        if value.number != 0 and (name == wanted or name.endswith("_" + wanted)):
            return int(value.number)
    return None


def _choice_of(field: Any, number: int) -> str | None:
    value = field.enum_type.values_by_number.get(number)
    return None if value is None else str(value.name)


def canonical_options(
    game: str,
    options: games_pb2.GameOptions,
    description: rules_pb2.DescribeGameResponse,
    most_seats: int | None = None,
) -> games_pb2.GameOptions:
    """The options with every default filled in, or INVALID_ARGUMENT naming the bad option.

    Integer options: 0 (unset) = the default, else within the described range. Choice options are
    enum fields whose value names are the choices (``MODE_FIRST_LINE``; a bare suffix such as
    ``first_line`` is matched too), or string fields holding the choice; 0 / empty = the default.
    `most_seats`: the largest table the options may be played at; an option described with a
    smaller `max_seats` must then stay at its default (OPTION_NOT_FOR_SEATS). Everything comes
    from the game's description, so the lobby holds no game's rules."""
    chosen = options.WhichOneof("game")
    if chosen is not None and chosen != game:
        raise invalid("OPTIONS_MISMATCH", f"options are for {chosen}, not {game}", field="options")
    field_name = game
    if field_name not in games_pb2.GameOptions.DESCRIPTOR.fields_by_name:
        # A game without an options message of its own: nothing to check.
        return games_pb2.GameOptions()
    given: Message = getattr(options, field_name)
    result = games_pb2.GameOptions()
    out: Message = getattr(result, field_name)
    out.SetInParent()
    fields = given.DESCRIPTOR.fields_by_name
    described = {spec.name for spec in description.options}
    for present, _ in given.ListFields():
        if present.name not in described:
            raise invalid("UNKNOWN_OPTION", f"{game} has no option {present.name}", field=present.name)
    for spec in description.options:
        field = fields.get(spec.name)
        if field is None:
            log.warning("described option has no field", extra={"game": game, "option": spec.name})
            continue
        value = getattr(given, spec.name)
        kind = spec.WhichOneof("values")
        if kind == "integer":
            bounds = spec.integer
            if field.cpp_type not in (
                descriptor.FieldDescriptor.CPPTYPE_INT32,
                descriptor.FieldDescriptor.CPPTYPE_INT64,
                descriptor.FieldDescriptor.CPPTYPE_UINT32,
                descriptor.FieldDescriptor.CPPTYPE_UINT64,
            ):
                continue
            number = int(value) or int(bounds.default_value)
            if not bounds.minimum <= number <= bounds.maximum:
                raise invalid(
                    "OPTION_OUT_OF_RANGE",
                    f"{spec.name.replace('_', ' ')} must be from {bounds.minimum} to {bounds.maximum} "
                    f"(the usual is {bounds.default_value})",
                    field=spec.name,
                )
            _check_seats(spec, number != int(bounds.default_value), most_seats)
            setattr(out, spec.name, number)
        elif kind == "choice":
            choices = list(spec.choice.choices)
            if field.cpp_type == descriptor.FieldDescriptor.CPPTYPE_ENUM:
                number = int(value) or (_enum_value_for(field, spec.choice.default_value) or 0)
                name = _choice_of(field, number)
                if name is None or not any(_enum_value_for(field, c) == number for c in choices):
                    raise invalid(
                        "OPTION_OUT_OF_RANGE", f"{spec.name} must be one of {', '.join(choices)}", field=spec.name
                    )
                _check_seats(spec, number != _enum_value_for(field, spec.choice.default_value), most_seats)
                setattr(out, spec.name, number)
            elif field.cpp_type == descriptor.FieldDescriptor.CPPTYPE_STRING:
                text = str(value) or spec.choice.default_value
                if text not in choices:
                    raise invalid(
                        "OPTION_OUT_OF_RANGE", f"{spec.name} must be one of {', '.join(choices)}", field=spec.name
                    )
                _check_seats(spec, text != spec.choice.default_value, most_seats)
                setattr(out, spec.name, text)
    return result


def _check_seats(spec: rules_pb2.OptionSpec, changed: bool, most_seats: int | None) -> None:
    if changed and spec.max_seats and most_seats is not None and most_seats > spec.max_seats:
        tables = "solo games" if spec.max_seats == 1 else f"tables of at most {spec.max_seats} seats"
        raise invalid(
            "OPTION_NOT_FOR_SEATS",
            f"{spec.name} is for {tables} only; this table could seat {most_seats}: "
            f"leave {spec.name} at its default or ask for fewer seats",
            field=spec.name,
        )


def per_move_ms(settings: LobbySettings, control: play_pb2.TimeControl) -> int:
    """The one reading of a TimeControl (rooms, challenges, matchmaking, tournaments): the per-move
    time in ms, its default when unset; refused BAD_TIME_CONTROL / BAD_DAYS_PER_MOVE."""
    if control.days_per_move:
        if control.HasField("per_move"):
            raise invalid(
                "BAD_TIME_CONTROL", "set per_move or days_per_move, not both", field="time_control.days_per_move"
            )
        if control.days_per_move not in DAYS_PER_MOVE:
            raise invalid(
                "BAD_DAYS_PER_MOVE",
                f"days_per_move must be one of {', '.join(str(d) for d in DAYS_PER_MOVE)}",
                field="time_control.days_per_move",
            )
        return int(control.days_per_move) * DAY_MS
    if not control.HasField("per_move"):
        return round(settings.per_move_s * 1000)
    duration = control.per_move
    if duration.seconds < 0 or duration.nanos < 0 or duration.nanos >= 1_000_000_000:
        raise invalid("BAD_TIME_CONTROL", "per_move must be a positive duration", field="time_control")
    seconds = duration.seconds + duration.nanos / 1e9
    if not settings.min_per_move_s <= seconds <= settings.max_per_move_s:
        raise invalid(
            "BAD_TIME_CONTROL",
            f"per_move must be {settings.min_per_move_s:g}..{settings.max_per_move_s:g} seconds",
            field="time_control",
        )
    return round(seconds * 1000)


def match_seats(description: rules_pb2.DescribeGameResponse, min_seats: int, max_seats: int) -> tuple[int, int]:
    """The table size range of a FindMatch (0 = the game's bound). Queues seat two or more; a
    one-seat table (solo) needs no queue."""
    low_bound, high_bound = int(description.min_seats), int(description.max_seats)
    low = min_seats or low_bound
    high = max_seats or high_bound
    if not low_bound <= low <= high <= high_bound:
        raise invalid(
            "BAD_SEATS",
            f"{description.game} seats {low_bound}..{high_bound}; asked for {low}..{high}",
            field="min_seats" if not low_bound <= low <= high_bound else "max_seats",
        )
    if high > 1:
        low = max(low, 2)
    return low, high


def room_seats(description: rules_pb2.DescribeGameResponse, seats: int) -> int:
    low, high = int(description.min_seats), int(description.max_seats)
    chosen = seats or high
    if not low <= chosen <= high:
        raise invalid("BAD_SEATS", f"{description.game} seats {low}..{high}, not {chosen}", field="seats")
    return chosen


def game_type(description: rules_pb2.DescribeGameResponse) -> play_pb2.GameType:
    return play_pb2.GameType(
        game=description.game,
        title=description.title,
        min_seats=description.min_seats,
        max_seats=description.max_seats,
        # rules.v1.OptionSpec and play.v1.OptionSpec are the same message, field for field.
        options=[play_pb2.OptionSpec.FromString(o.SerializeToString()) for o in description.options],
        default_options=description.default_options,
        rules_url=description.rules_url,
    )


# ---------------------------------------------------------------------------------------------


class LobbyServicer(play_pb2_grpc.LobbyServiceServicer):
    def __init__(
        self,
        layer: RedisLayer,
        authenticator: PlayerSource,
        directory: GameStarter,
        router: Catalogue,
        settings: LobbySettings,
        *,
        pubsub: PubSub,
        matchmaking: MatchmakingSettings,
        rooms: RoomSettings,
        ratings: RatingSource | None = None,
    ) -> None:
        self.layer = layer
        self.auth = authenticator
        self.router = router
        self.settings = settings
        self.matchmaker = Matchmaker(layer, pubsub, directory, ratings or HashRatings(layer), matchmaking)
        self.rooms = Rooms(layer, pubsub, directory, rooms)
        self._started = False
        self._buckets: OrderedDict[_BucketKey, tuple[rules_pb2.DescribeGameResponse, BucketSpec]] = OrderedDict()

    async def start(self) -> None:
        """Subscribe to the lobby's wake-ups (done lazily on the first waiting call otherwise)."""
        if not self._started:
            await self.matchmaker.listen()
            await self.rooms.listen()
            self._started = True

    async def close(self) -> None:
        await self.matchmaker.close()
        self.rooms.close()

    def _bucket_of(self, request: play_pb2.FindMatchRequest, description: rules_pb2.DescribeGameResponse) -> BucketSpec:
        """The search's bucket. Kept per game, options, seats and time control while the game's
        description is the one it was made from: a busy queue's searches all ask for the same
        few, and each made its options canonical and hashed its bucket id (a sha1) anew."""
        key = (
            request.game,
            request.options.SerializeToString(deterministic=True),
            request.min_seats,
            request.max_seats,
            request.time_control.SerializeToString(deterministic=True),
        )
        kept = self._buckets.get(key)
        if kept is not None and kept[0] is description:
            return kept[1]
        low, high = match_seats(description, request.min_seats, request.max_seats)
        # Every option is checked now against the largest table the search may form (a solo-only
        # option is refused here, not when a match would form).
        options = canonical_options(request.game, request.options, description, most_seats=high)
        per_move = per_move_ms(self.settings, request.time_control)
        spec = BucketSpec(request.game, options, per_move, low, high)
        self._buckets[key] = (description, spec)
        if len(self._buckets) > _BUCKETS_KEPT:
            self._buckets.popitem(last=False)
        return spec

    async def _describe(self, game: str) -> rules_pb2.DescribeGameResponse:
        check_game(self.router, game)
        return await self.router.describe(game)

    # -- game types ------------------------------------------------------------------------------

    @lobby_call
    async def ListGameTypes(
        self, request: play_pb2.ListGameTypesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.ListGameTypesResponse:
        response = play_pb2.ListGameTypesResponse()
        last: Refused | None = None
        for game in self.router.games:
            try:
                response.game_types.append(game_type(await self.router.describe(game)))
            except Refused as refused:
                # A game whose rules service is down is left out rather than failing the list.
                last = refused
                log.warning("game type not listed", extra={"game": game, "reason": refused.reason})
        if not response.game_types and last is not None:
            await abort(context, last)
        return response

    # -- matchmaking -----------------------------------------------------------------------------

    @lobby_call
    async def FindMatch(
        self, request: play_pb2.FindMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncGenerator[play_pb2.FindMatchResponse, None]:
        player = await self.auth.player(context)
        if request.watch:  # refused rather than ignored: the caller would wait for a view that never comes
            raise invalid(
                "WATCH_NEEDS_PLAY_STREAM",
                "watch is for find_match on the Play stream; here, watch the game once matched",
                field="watch",
            )
        async with contextlib.aclosing(self.match_updates(player, request)) as updates:
            async for message in updates:
                yield message

    async def match_updates(
        self, player: play_pb2.Player, request: play_pb2.FindMatchRequest, leaving: Leaving | None = None
    ) -> AsyncGenerator[play_pb2.FindMatchResponse, None]:
        """FindMatch for a signed-in player, on whatever carries it (its own call or the Play
        stream): MatchQueued updates, then MatchFound. Raises Refused. `leaving`: the Play
        stream's StopFinding marks it (a correspondence search withdrawn, not parked); a FindMatch
        call's end cannot say it was asked for (CancelSearch is)."""
        spec = self._bucket_of(request, await self._describe(request.game))
        if request.request_id:
            check_id("request_id", request.request_id)
        await self.start()
        # Closed explicitly: when this generator is closed, the search (and its ticket) ends now,
        # not whenever the loop finalizes an abandoned generator.
        async with contextlib.aclosing(self.matchmaker.find(spec, player, request.request_id, leaving)) as updates:
            async for message in updates:
                yield message

    @lobby_call
    async def ListMySearches(
        self, request: play_pb2.ListMySearchesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.ListMySearchesResponse:
        player = await self.auth.player(context)
        return play_pb2.ListMySearchesResponse(searches=await self.matchmaker.waiting(player.player_id))

    @lobby_call
    async def CancelSearch(
        self, request: play_pb2.CancelSearchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.CancelSearchResponse:
        player = await self.auth.player(context)
        check_game(self.router, request.game)
        cancelled, game_id = await self.matchmaker.cancel_search(player.player_id, request.game)
        return play_pb2.CancelSearchResponse(cancelled=cancelled, game_id=game_id)

    # -- rooms -----------------------------------------------------------------------------------

    @lobby_call
    async def CreateRoom(
        self, request: play_pb2.CreateRoomRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.CreateRoomResponse:
        player = await self.auth.player(context)
        description = await self._describe(request.game)
        seats = room_seats(description, request.seats)
        # Checked against the room's size now, not when it fills.
        options = canonical_options(request.game, request.options, description, most_seats=seats)
        per_move = per_move_ms(self.settings, request.time_control)
        room = await self.rooms.create(
            game=request.game,
            options=options,
            per_move_ms=per_move,
            seats=seats,
            min_seats=max(1, int(description.min_seats)),
            host=player,
            watchable=request.watchable,
        )
        return play_pb2.CreateRoomResponse(room=room.to_proto())

    @lobby_call
    async def JoinRoom(
        self, request: play_pb2.JoinRoomRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.JoinRoomResponse:
        player = await self.auth.player(context)
        code = normalize_code(request.code)
        served = dict(context.invocation_metadata() or ()).get(BOT_REQUEST_HEADER)
        if not (isinstance(served, str) and served):
            room = await self.rooms.join(code, player)
            return play_pb2.JoinRoomResponse(room=room.to_proto())
        # A bot pool's bot names the request it serves: it sits as that request's bot (the
        # platform's mark, never the player's), and the request is done (no sweeper re-queues it,
        # and a repeat RequestBot no longer counts it as pending).
        bot = await as_bot(self.layer, code, served[:64], player)
        if bot is None:
            room = await self.rooms.get(code)
            if any(p.player_id == player.player_id for p in room.players):
                return play_pb2.JoinRoomResponse(room=room.to_proto())  # a retry: seated already
            raise Refused(
                grpc.StatusCode.PERMISSION_DENIED,
                "NOT_A_BOT_REQUEST",
                "this join names no bot request of this room: join without it to play as yourself",
            )
        room = await self.rooms.join(code, bot)
        await settle_joined(self.layer, room.game, room.code, served[:64])
        return play_pb2.JoinRoomResponse(room=room.to_proto())

    @lobby_call
    async def LeaveRoom(
        self, request: play_pb2.LeaveRoomRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.LeaveRoomResponse:
        player = await self.auth.player(context)
        room = await self.rooms.leave(normalize_code(request.code), player)
        return play_pb2.LeaveRoomResponse(room=room.to_proto())

    @lobby_call
    async def StartRoom(
        self, request: play_pb2.StartRoomRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.StartRoomResponse:
        player = await self.auth.player(context)
        room = await self.rooms.start(normalize_code(request.code), player)
        return play_pb2.StartRoomResponse(room=room.to_proto())

    @lobby_call
    async def GetRoom(
        self, request: play_pb2.GetRoomRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> play_pb2.GetRoomResponse:
        await self.auth.player(context)
        room = await self.rooms.get(normalize_code(request.code))
        return play_pb2.GetRoomResponse(room=room.to_proto())

    @lobby_call
    async def WatchRoom(
        self, request: play_pb2.WatchRoomRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[play_pb2.WatchRoomResponse]:
        await self.auth.player(context)
        code = normalize_code(request.code)
        await self.start()
        async for room in self.rooms.watch(code):
            yield play_pb2.WatchRoomResponse(room=room.to_proto())
