"""The tafel client: every call of the public API (tafel.play.v1), typed, with clear errors.

    async with await TafelClient.connect("127.0.0.1:50051") as client:
        await client.sign_in_as_guest()
        match = await client.find_match("connect4")
        async for event in client.watch(match.game_id):
            ...

Every state-changing call carries a request id the SDK chooses, so retrying after a dropped
connection is always safe: the server applies it once and answers the same way.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import grpc
from google.protobuf.message import Message

from tafel.chat import ChatStream
from tafel.errors import IllegalMove, NotFound, TafelError, Unavailable, from_rpc_error
from tafel.events import AccountEventStream
from tafel.games.v1 import games_pb2
from tafel.messages import game_move, game_options
from tafel.play.v1 import (
    bots_pb2,
    bots_pb2_grpc,
    challenges_pb2,
    challenges_pb2_grpc,
    notices_pb2,
    notices_pb2_grpc,
    play_pb2,
    play_pb2_grpc,
    safety_pb2,
    safety_pb2_grpc,
    social_pb2,
    social_pb2_grpc,
    tournaments_pb2,
    tournaments_pb2_grpc,
)
from tafel.play_stream import MAX_RECONNECTS, PlayStream
from tafel.requests import challenge_policy as _challenge_policy
from tafel.requests import (
    decline_reason,
    duration,
    event_position,
    find_match_request,
    is_after,
    new_request_id,
    notification_kind,
    offer_kind,
    report_reason,
    seat_preference,
    set_time_control,
)
from tafel.retry import NOT_IDEMPOTENT, RETRYABLE, STREAM_RETRYABLE, Attempts, Backoff, Link, service_config

# Older callers import these from here.
__all__ = [
    "RETRYABLE",
    "STREAM_RETRYABLE",
    "TafelClient",
    "event_position",
    "find_match_request",
    "new_request_id",
]

STREAM_ATTEMPTS = 20  # consecutive failed attempts before a resuming stream gives up


GAP_S = 10.0  # how long a unary call waits for a gateway to come back (see TafelClient._call)
# ... and a patient client's (a bot): long enough for the whole platform to be restarted by hand.
PATIENT_GAP_S = 600.0


def _channel(
    targets: Sequence[str], tls: bool, root_certificates: bytes | None, own_connection: bool = False
) -> grpc.aio.Channel:
    options: list[tuple[str, Any]] = [
        ("grpc.keepalive_time_ms", 20_000),
        ("grpc.http2.bdp_probe", 0),
        # A gateway back from a restart is used again within 2 s: gRPC's default reconnect backoff
        # grows to 120 s, and after a rolling restart of every gateway (each one's connection
        # failed in turn) a unary call could find all of them still backing off and fail even
        # though both were up again (seen under load in test_sdk_graceful_stop).
        ("grpc.initial_reconnect_backoff_ms", 250),
        ("grpc.max_reconnect_backoff_ms", 2_000),
        # Unary calls are retried by gRPC itself (tafel/retry.py says which and how).
        ("grpc.service_config", service_config()),
    ]
    if own_connection:
        # gRPC shares one connection between every channel of a process to the same address.
        options.append(("grpc.use_local_subchannel_pool", 1))
    if len(targets) == 1:
        target = targets[0]
    else:
        # Client-side load balancing over several gateways (round robin per call).
        target = "ipv4:" + ",".join(targets)
        options.append(("grpc.lb_policy_name", "round_robin"))
    if tls:
        credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates)
        return grpc.aio.secure_channel(target, credentials, options=options)
    return grpc.aio.insecure_channel(target, options=options)


class TafelClient:
    """A connection to tafel's gateway(s). Create with `await TafelClient.connect(...)`, whose
    channel retries unary calls (tafel/retry.py); a channel made elsewhere brings its own policy."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel
        self.bots = bots_pb2_grpc.BotServiceStub(channel)
        self.accounts = play_pb2_grpc.AccountServiceStub(channel)
        self.lobby = play_pb2_grpc.LobbyServiceStub(channel)
        self.games = play_pb2_grpc.GameServiceStub(channel)
        self.ratings = tournaments_pb2_grpc.RatingServiceStub(channel)
        self.tournaments = tournaments_pb2_grpc.TournamentServiceStub(channel)
        self.safety = safety_pb2_grpc.SafetyServiceStub(channel)
        self.events = challenges_pb2_grpc.EventServiceStub(channel)
        self.challenges = challenges_pb2_grpc.ChallengeServiceStub(channel)
        self.chat = social_pb2_grpc.ChatServiceStub(channel)
        self.friends = social_pb2_grpc.FriendServiceStub(channel)
        self.profiles = social_pb2_grpc.ProfileServiceStub(channel)
        self.notices = notices_pb2_grpc.NotificationServiceStub(channel)
        self.email = notices_pb2_grpc.EmailServiceStub(channel)
        self.vacations = notices_pb2_grpc.VacationServiceStub(channel)
        self.session: play_pb2.Session | None = None
        # Calls a retry could apply twice (tafel/retry.py NOT_IDEMPOTENT): never waited for and resent.
        self._once: set[int] = set()
        self.never_resend(self.accounts, self.lobby, self.bots, self.games, self.tournaments)
        self._reached = False  # some call was answered: a gateway existed, so UNAVAILABLE is a gap
        # A program left running (a bot, the bot pool) outlasts a platform restart of minutes: its
        # resuming streams never give up (their backoff stays capped) and a unary call waits up
        # to PATIENT_GAP_S for a gateway. Ctrl-C (cancellation) still stops it at once.
        self.patient = False

    @classmethod
    async def connect(
        cls,
        target: str | Sequence[str],
        *,
        tls: bool = False,
        root_certificates: bytes | None = None,
        own_connection: bool = False,
    ) -> TafelClient:
        """Connect to one gateway ("host:port") or several (a list: round robin between them).

        `own_connection`: a TCP connection of this client's own; by default gRPC lets every
        client of a process to the same gateway share one (what one program wants; a load
        generator standing in for many players' machines wants one each)."""
        targets = [target] if isinstance(target, str) else list(target)
        if not targets:
            raise ValueError("no gateway address given")
        return cls(_channel(targets, tls, root_certificates, own_connection))

    async def close(self) -> None:
        await self.channel.close()

    async def __aenter__(self) -> TafelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- plumbing -----------------------------------------------------------------------------------

    def never_resend(self, *stubs: object) -> None:
        """`_call` must not resend these stubs' calls that are not safe to repeat (a stub made on
        this client's channel elsewhere, as tafel.staff's, registers its own here)."""
        for stub in stubs:
            self._once.update(id(getattr(stub, name)) for name in NOT_IDEMPOTENT if hasattr(stub, name))

    @property
    def player(self) -> play_pb2.Player:
        if self.session is None:
            raise TafelError("NOT_SIGNED_IN", "sign in first (register, sign_in or sign_in_as_guest)")
        return self.session.player

    def metadata(self) -> tuple[tuple[str, str], ...]:
        if self.session is None:
            return ()
        return (("authorization", f"Bearer {self.session.token}"),)

    async def _call(self, method: Any, request: Message, *, timeout: float = 30.0) -> Any:
        """A unary call with the token and mapped errors (the channel's retry policy retries it).

        The channel's retries span under a second. When every gateway's connection is down at once
        (a rolling restart: each one stopped in turn, the client's reconnects still backing off),
        a client that has reached a gateway before waits for one to be ready again (within the
        call's timeout, at most GAP_S) and tries once more; one that never reached any fails at once
        (a server that is not running gets its clear error without a wait)."""
        deadline = asyncio.get_running_loop().time() + timeout
        try:
            answer = await method(request, metadata=self.metadata(), timeout=timeout)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE or not self._reached or id(method) in self._once:
                raise from_rpc_error(error) from None
            left = deadline - asyncio.get_running_loop().time()
            gap = PATIENT_GAP_S if self.patient else min(left, GAP_S)
            try:
                await asyncio.wait_for(self.channel.channel_ready(), gap)
            except (TimeoutError, grpc.aio.UsageError):
                raise from_rpc_error(error) from None
            try:
                left = timeout if self.patient else max(0.1, deadline - asyncio.get_running_loop().time())
                answer = await method(request, metadata=self.metadata(), timeout=left)
            except grpc.aio.AioRpcError as again:
                raise from_rpc_error(again) from None
        self._reached = True
        return answer

    def _limit(self, max_retries: int | None) -> int | None:
        """A resuming stream's limit on consecutive failures (None: never give up)."""
        return None if self.patient else max_retries

    # -- accounts -----------------------------------------------------------------------------------

    async def register(self, username: str, password: str, display_name: str = "") -> play_pb2.Player:
        """`display_name` (optional): the name others see, in any script (1-32 characters)."""
        response = await self._call(
            self.accounts.Register,
            play_pb2.RegisterRequest(username=username, password=password, display_name=display_name),
        )
        self.session = response.session
        return self.player

    async def sign_in(self, username: str, password: str) -> play_pb2.Player:
        response = await self._call(self.accounts.SignIn, play_pb2.SignInRequest(username=username, password=password))
        self.session = response.session
        return self.player

    async def sign_in_as_guest(self, display_name: str = "") -> play_pb2.Player:
        """`display_name` (optional): the name others see instead of the generated guest name."""
        response = await self._call(
            self.accounts.SignInAsGuest, play_pb2.SignInAsGuestRequest(display_name=display_name)
        )
        self.session = response.session
        return self.player

    async def set_display_name(self, display_name: str) -> play_pb2.Player:
        """The name others see ("" removes it: the username shows). Tokens carry it, so this client
        carries on with the fresh session the server answers. Refusals: BAD_DISPLAY_NAME,
        DISPLAY_NAME_TOO_LONG, DISPLAY_NAME_RESERVED."""
        request = play_pb2.SetDisplayNameRequest(display_name=display_name)
        self.session = (await self._call(self.accounts.SetDisplayName, request)).session
        return self.player

    async def me(self) -> play_pb2.Player:
        response = await self._call(self.accounts.GetMe, play_pb2.GetMeRequest())
        return response.player  # type: ignore[no-any-return]

    def use_session(self, session: play_pb2.Session) -> play_pb2.Player:
        """Carry on as a session kept from before (a guest too: its token is its identity), e.g.
        after a restart or on a new connection to another gateway."""
        self.session = session
        return self.player

    async def refresh_session(self) -> play_pb2.Session:
        """A new token with a fresh expiry for this session; call it before the session expires."""
        response = await self._call(self.accounts.RefreshSession, play_pb2.RefreshSessionRequest())
        self.session = response.session
        return response.session  # type: ignore[no-any-return]

    async def sign_out(self, *, all_sessions: bool = False) -> None:
        """Revoke this session's token on every gateway (or every session of the player)."""
        await self._call(self.accounts.SignOut, play_pb2.SignOutRequest(all_sessions=all_sessions))
        self.session = None

    async def get_me(self) -> play_pb2.GetMeResponse:
        """Who this session is, and its role (play_pb2.ROLE_PLAYER, ROLE_MODERATOR, ...)."""
        return await self._call(self.accounts.GetMe, play_pb2.GetMeRequest())  # type: ignore[no-any-return]

    async def role(self) -> play_pb2.Role.ValueType:
        return (await self.get_me()).role

    async def change_password(self, current_password: str, new_password: str) -> play_pb2.Session:
        """A new password; every other session of the account is revoked, this client carries on
        with the fresh session the answer brings (WRONG_PASSWORD, GUEST_ACCOUNT otherwise)."""
        request = play_pb2.ChangePasswordRequest(current_password=current_password, new_password=new_password)
        response = await self._call(self.accounts.ChangePassword, request)
        self.session = response.session
        return response.session  # type: ignore[no-any-return]

    async def delete_account(self, password: str) -> None:
        """Erase this account for good (its password confirms it); the session ends with it."""
        await self._call(self.accounts.DeleteAccount, play_pb2.DeleteAccountRequest(password=password))
        self.session = None

    async def export_my_data(self) -> dict[str, Any]:
        """Everything the platform keeps about this account, as the JSON document the server
        writes (docs/security.md lists its fields), parsed."""
        response = await self._call(self.accounts.ExportMyData, play_pb2.ExportMyDataRequest())
        document = json.loads(response.json)
        if not isinstance(document, dict):
            raise TafelError("BAD_EXPORT", "the server's export is not a JSON object")
        return document

    # -- safety: block, mute, report, standing ---------------------------------------------------------

    async def block(self, username: str) -> play_pb2.Player:
        """Never matched or seated with them, no challenges or invitations from them, their chat
        hidden; they are not told."""
        request = safety_pb2.BlockPlayerRequest(username=username)
        return (await self._call(self.safety.BlockPlayer, request)).player  # type: ignore[no-any-return]

    async def unblock(self, username: str) -> None:
        await self._call(self.safety.UnblockPlayer, safety_pb2.UnblockPlayerRequest(username=username))

    async def mute(self, username: str) -> play_pb2.Player:
        """Their chat lines hidden from you; nothing else changes."""
        request = safety_pb2.MutePlayerRequest(username=username)
        return (await self._call(self.safety.MutePlayer, request)).player  # type: ignore[no-any-return]

    async def unmute(self, username: str) -> None:
        await self._call(self.safety.UnmutePlayer, safety_pb2.UnmutePlayerRequest(username=username))

    async def list_blocked(self) -> safety_pb2.ListBlockedResponse:
        """The players you block (`.blocked`) and mute (`.muted`)."""
        return await self._call(self.safety.ListBlocked, safety_pb2.ListBlockedRequest())  # type: ignore[no-any-return]

    async def report(
        self,
        username: str,
        reason: str | safety_pb2.ReportReason.ValueType,
        *,
        game_id: str = "",
        message_id: str = "",
        chat_channel: social_pb2.ChatChannel | None = None,
        details: str = "",
        request_id: str | None = None,
    ) -> str:
        """Report a player (and the game or chat message it happened in) to the moderators; returns
        the report's id. `reason`: a ReportReason or its name ("abuse", "spam", "cheating",
        "unsporting", "offensive_name", "other"). A chat message: its `message_id` and its
        `chat_channel` (unset: the players' channel of `game_id`); the report keeps it and the lines
        around it. Retried with the same request id, it is filed once."""
        request = safety_pb2.ReportRequest(
            request_id=request_id or new_request_id(),
            username=username,
            game_id=game_id,
            message_id=message_id,
            reason=report_reason(reason),
            details=details,
            chat_channel=chat_channel,
        )
        return str((await self._call(self.safety.Report, request)).report_id)

    async def my_standing(self) -> safety_pb2.GetMyStandingResponse:
        """Your warnings and the sanctions in force (a chat mute, for instance), newest first."""
        return await self._call(self.safety.GetMyStanding, safety_pb2.GetMyStandingRequest())  # type: ignore[no-any-return]

    # -- lobby --------------------------------------------------------------------------------------

    async def game_types(self) -> list[play_pb2.GameType]:
        response = await self._call(self.lobby.ListGameTypes, play_pb2.ListGameTypesRequest())
        return list(response.game_types)

    async def find_match_updates(
        self,
        game: str,
        options: Message | None = None,
        *,
        per_move_s: float | None = None,
        days_per_move: int | None = None,
        min_seats: int = 0,
        max_seats: int = 0,
        max_retries: int | None = STREAM_ATTEMPTS,
        on_connection: Callable[[bool], Awaitable[None]] | None = None,
    ) -> AsyncIterator[play_pb2.FindMatchResponse]:
        """Queue for a game and yield each status until matched. Breaking out (or cancelling
        the task) leaves the queue, except for a correspondence search (`days_per_move`), which
        stays queued for a week until matched (the game comes as GameStarted on `my_events`) or
        withdrawn with `cancel_search`. A lost connection or a stopping gateway sends the search
        again (same request id: it takes over its ticket) until it is matched.

        `max_retries` and `on_connection` as for `watch_with_deadlines` (the search is live again
        when the gateway answers the resent search with its status)."""
        request = find_match_request(
            game, options, per_move_s=per_move_s, days_per_move=days_per_move, min_seats=min_seats, max_seats=max_seats
        )
        attempts = Attempts(self._limit(max_retries))
        link = Link(on_connection)
        while True:
            call = self.lobby.FindMatch(request, metadata=self.metadata())
            try:
                async for update in call:
                    attempts.reset()
                    await link.up()
                    yield update
                    if update.WhichOneof("status") == "matched":
                        return
                # Ended without a match (a gateway stopping): search again.
            except grpc.aio.AioRpcError as error:
                if error.code() not in STREAM_RETRYABLE or attempts.exhausted:
                    raise from_rpc_error(error) from None
            finally:
                call.cancel()
            await link.down()
            if attempts.exhausted:
                raise Unavailable("UNAVAILABLE", "matchmaking could not be reached")
            await attempts.failed()

    async def find_match(self, game: str, options: Message | None = None, **kwargs: Any) -> play_pb2.MatchFound:
        """Queue and wait until matched; returns the game id and seat."""
        async for update in self.find_match_updates(game, options, **kwargs):
            if update.WhichOneof("status") == "matched":
                return update.matched
        raise TafelError("MATCH_ENDED", "the matchmaking stream ended without a match")

    async def list_my_searches(self) -> list[play_pb2.WaitingSearch]:
        """Your correspondence searches waiting for an opponent (they outlive the stream that
        sent them), oldest first."""
        response = await self._call(self.lobby.ListMySearches, play_pb2.ListMySearchesRequest())
        return list(response.searches)

    async def cancel_search(self, game: str) -> play_pb2.CancelSearchResponse:
        """Withdraw your waiting search for `game` (idempotent): `cancelled` says whether one was
        waiting; `game_id` names the game it started if it had been paired already."""
        response: play_pb2.CancelSearchResponse = await self._call(
            self.lobby.CancelSearch, play_pb2.CancelSearchRequest(game=game)
        )
        return response

    async def create_room(
        self,
        game: str,
        options: Message | None = None,
        *,
        seats: int = 0,
        per_move_s: float | None = None,
        days_per_move: int | None = None,
        watchable: bool = False,
    ) -> play_pb2.Room:
        """`watchable`: strangers may find and watch the room's game (private by default).
        `days_per_move` (1, 2, 3, 5, 7, 10, 14) instead of `per_move_s`: a correspondence game."""
        request = play_pb2.CreateRoomRequest(game=game, options=game_options(options), seats=seats, watchable=watchable)
        set_time_control(request.time_control, per_move_s, days_per_move)
        return (await self._call(self.lobby.CreateRoom, request)).room  # type: ignore[no-any-return]

    async def join_room(self, code: str) -> play_pb2.Room:
        return (await self._call(self.lobby.JoinRoom, play_pb2.JoinRoomRequest(code=code))).room  # type: ignore[no-any-return]

    async def leave_room(self, code: str) -> play_pb2.Room:
        return (await self._call(self.lobby.LeaveRoom, play_pb2.LeaveRoomRequest(code=code))).room  # type: ignore[no-any-return]

    async def start_room(self, code: str) -> play_pb2.Room:
        return (await self._call(self.lobby.StartRoom, play_pb2.StartRoomRequest(code=code))).room  # type: ignore[no-any-return]

    async def get_room(self, code: str) -> play_pb2.Room:
        return (await self._call(self.lobby.GetRoom, play_pb2.GetRoomRequest(code=code))).room  # type: ignore[no-any-return]

    async def watch_room(
        self,
        code: str,
        *,
        max_retries: int | None = STREAM_ATTEMPTS,
        on_connection: Callable[[bool], Awaitable[None]] | None = None,
    ) -> AsyncIterator[play_pb2.Room]:
        """The room now and on every change, until it starts or closes. A lost connection (a
        gateway restarting) watches again: the room is kept by the platform, not the gateway, and
        a new watch starts with the room as it is now, so nothing is missed.

        `max_retries` and `on_connection` as for `watch_with_deadlines` (live again with the
        room's first message)."""
        attempts = Attempts(self._limit(max_retries))
        link = Link(on_connection)
        final = (play_pb2.ROOM_STATE_STARTED, play_pb2.ROOM_STATE_CLOSED)
        while True:
            call = self.lobby.WatchRoom(play_pb2.WatchRoomRequest(code=code), metadata=self.metadata())
            try:
                async for update in call:
                    attempts.reset()
                    self._reached = True
                    await link.up()
                    yield update.room
                    if update.room.state in final:
                        return
                # Ended before the room started or closed: a gateway stopping. Watch again.
            except grpc.aio.AioRpcError as error:
                if error.code() not in STREAM_RETRYABLE or attempts.exhausted:
                    raise from_rpc_error(error) from None
            finally:
                call.cancel()
            await link.down()
            if attempts.exhausted:
                raise Unavailable("UNAVAILABLE", f"the room {code} could not be watched again")
            await attempts.failed()

    async def wait_room_started(
        self, code: str, *, on_connection: Callable[[bool], Awaitable[None]] | None = None
    ) -> play_pb2.Room:
        """Wait for the room's game; through a gateway's restart too (as `watch_room`)."""
        max_retries = None if on_connection is not None else STREAM_ATTEMPTS  # someone is told: keep waiting
        async for room in self.watch_room(code, max_retries=max_retries, on_connection=on_connection):
            if room.state == play_pb2.ROOM_STATE_STARTED:
                return room
            if room.state == play_pb2.ROOM_STATE_CLOSED:
                raise TafelError("ROOM_CLOSED", f"room {code} closed before it started")
        raise TafelError("ROOM_ENDED", f"watching room {code} ended before it started")

    # -- play ---------------------------------------------------------------------------------------

    async def get_game(self, game_id: str) -> play_pb2.GetGameResponse:
        return await self._call(self.games.GetGame, play_pb2.GetGameRequest(game_id=game_id))  # type: ignore[no-any-return]

    async def wait_for_game(self, game_id: str, timeout_s: float = 15.0) -> play_pb2.GetGameResponse:
        """GetGame, waiting while the game is still being created (a tournament round or a room
        announces its game id a moment before the game exists)."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        backoff = Backoff(first_s=0.05, cap_s=1.0, jitter=0.0)
        tries = 0
        while True:
            try:
                return await self.get_game(game_id)
            except NotFound:
                tries += 1
                delay = backoff.delay(tries)
                if asyncio.get_running_loop().time() + delay > deadline:
                    raise
                await asyncio.sleep(delay)

    async def submit_move(
        self,
        game_id: str,
        move: Message,
        *,
        expected_version: int | None = None,
        request_id: str | None = None,
        seat: int | None = None,
    ) -> play_pb2.SubmitMoveResponse:
        """Submit a typed move (e.g. `connect4_pb2.Move(column=3)`). Without `expected_version`
        the SDK reads the game's current version first."""
        if expected_version is None:
            expected_version = (await self.get_game(game_id)).summary.status.version
        request = play_pb2.SubmitMoveRequest(
            game_id=game_id,
            expected_version=expected_version,
            request_id=request_id or new_request_id(),
            move=game_move(move),
        )
        if seat is not None:
            request.seat = seat
        return await self._call(self.games.SubmitMove, request)  # type: ignore[no-any-return]

    async def resign(self, game_id: str, *, request_id: str | None = None) -> play_pb2.ResignResponse:
        request = play_pb2.ResignRequest(game_id=game_id, request_id=request_id or new_request_id())
        return await self._call(self.games.Resign, request)  # type: ignore[no-any-return]

    async def list_my_games(self, *, page_size: int = 50, page_token: str = "") -> play_pb2.ListMyGamesResponse:
        request = play_pb2.ListMyGamesRequest(page_size=page_size, page_token=page_token)
        return await self._call(self.games.ListMyGames, request)  # type: ignore[no-any-return]

    async def list_live_games(
        self, game: str = "", *, page_size: int = 50, page_token: str = ""
    ) -> play_pb2.ListLiveGamesResponse:
        request = play_pb2.ListLiveGamesRequest(game=game, page_size=page_size, page_token=page_token)
        return await self._call(self.games.ListLiveGames, request)  # type: ignore[no-any-return]

    async def get_record(self, game_id: str) -> play_pb2.GameRecord:
        response = await self._call(self.games.GetGameRecord, play_pb2.GetGameRecordRequest(game_id=game_id))
        return response.record  # type: ignore[no-any-return]

    async def get_replay(self, game_id: str) -> tuple[play_pb2.GameRecord, list[games_pb2.GameView]]:
        """A finished game's record and its every position as the server rebuilt it: views[v] is the
        position after version v (a replay draws it as a live board). No views once the platform no
        longer keeps them (GetGameRecordResponse.views says when)."""
        request = play_pb2.GetGameRecordRequest(game_id=game_id, include_views=True)
        response = await self._call(self.games.GetGameRecord, request)
        return response.record, list(response.views)

    async def list_records(
        self, *, player_id: str = "", game: str = "", page_size: int = 50, page_token: str = ""
    ) -> play_pb2.ListGameRecordsResponse:
        request = play_pb2.ListGameRecordsRequest(
            player_id=player_id, game=game, page_size=page_size, page_token=page_token
        )
        return await self._call(self.games.ListGameRecords, request)  # type: ignore[no-any-return]

    async def request_bot(self, room_code: str, level: int) -> str:
        """Ask the bot pool for a bot of `level` (1-3) to join your room."""
        request = bots_pb2.RequestBotRequest(room_code=room_code, level=level)
        return str((await self._call(self.bots.RequestBot, request)).request_id)

    # -- offers in a game: draw, takeback, rematch; abort ----------------------------------------------

    async def make_offer(
        self, game_id: str, kind: str | play_pb2.OfferKind.ValueType, *, seat: int | None = None
    ) -> play_pb2.Offer:
        """Offer a draw or ask for a takeback during the game, or offer a rematch after it (`kind`:
        "draw", "takeback", "rematch" or an OfferKind). The others get it on their event streams.
        Refusals: OFFER_NOT_ALLOWED (a draw with more than two players, a takeback in a rated game,
        a rematch of a tournament game or before the end), OFFER_PENDING (ALREADY_EXISTS: one of
        this kind waits, perhaps the other side's: answer it), NOTHING_TO_TAKE_BACK. Carries a
        request id, so a retry after a lost answer is answered with the same offer."""
        request = play_pb2.MakeOfferRequest(game_id=game_id, kind=offer_kind(kind), request_id=new_request_id())
        if seat is not None:
            request.seat = seat
        return (await self._call(self.games.MakeOffer, request)).offer  # type: ignore[no-any-return]

    async def answer_offer(
        self, game_id: str, kind: str | play_pb2.OfferKind.ValueType, accept: bool, *, seat: int | None = None
    ) -> play_pb2.Offer:
        """Accept or decline the pending offer of `kind` in the game (the one who made it withdraws
        it by declining). A draw accepted ends the game DRAW_AGREED; a takeback accepted takes the
        asker's last move back; a rematch accepted by every player starts its game
        (`Offer.new_game_id`, and a game_started event on every stream). Refusals: NO_OFFER (none
        pending, or a move made it moot), OWN_OFFER (you made it: the others answer)."""
        request = play_pb2.AnswerOfferRequest(game_id=game_id, kind=offer_kind(kind), accept=accept)
        if seat is not None:
            request.seat = seat
        return (await self._call(self.games.AnswerOffer, request)).offer  # type: ignore[no-any-return]

    async def abort_game(self, game_id: str) -> play_pb2.GameSummary:
        """End the game before every player has moved: no result, no rating (outcome ABORTED).
        Later it is refused TOO_LATE_TO_ABORT."""
        try:
            response = await self._call(self.games.AbortGame, play_pb2.AbortGameRequest(game_id=game_id))
        except IllegalMove as error:
            # A resend whose first try aborted the game is answered GAME_OVER: it did what was asked.
            if error.reason != "GAME_OVER":
                raise
            summary = (await self.get_game(game_id)).summary
            if summary.status.outcome.reason != "ABORTED":
                raise
            return summary
        return response.summary  # type: ignore[no-any-return]

    # -- challenges and the account's event stream -------------------------------------------------------

    def event_stream(
        self,
        after_event_id: str = "",
        *,
        max_retries: int | None = STREAM_ATTEMPTS,
        on_connection: Callable[[bool], Awaitable[None]] | None = None,
    ) -> AccountEventStream:
        """The account's events (challenges, games starting, offers) after `after_event_id`
        (empty: from now), resuming by itself after a cut with nothing lost or doubled; use as
        `async with client.event_stream() as events: async for event in events` (tafel/events.py).
        `max_retries` and `on_connection` as for `watch_with_deadlines`; a patient client's
        stream never gives up. An id no longer kept (a day) is OUT_OF_RANGE EVENT_ID_OUT_OF_RANGE."""
        return AccountEventStream(
            self, after_event_id, max_retries=self._limit(max_retries), on_connection=on_connection
        )

    async def my_events(self, after_event_id: str = "", **kwargs: Any) -> AsyncIterator[challenges_pb2.AccountEvent]:
        """The account's events as a plain iterator (`event_stream` without the `async with`)."""
        async with self.event_stream(after_event_id, **kwargs) as events:
            async for event in events:
                yield event

    async def create_challenge(
        self,
        game: str,
        options: Message | None = None,
        *,
        username: str = "",
        bot_level: int = 0,
        open: bool = False,
        rated: bool = False,
        per_move_s: float | None = None,
        days_per_move: int | None = None,
        seat: str | int | None = None,
        expires_in_s: float | None = None,
        request_id: str | None = None,
    ) -> challenges_pb2.Challenge:
        """Challenge a player by `username`, a bot by `bot_level` (accepted at once: the answer
        carries `room_code`, a private room of two the bot joins; `wait_room_started(room_code)`
        gives the game) or anyone (`open`, listed in the lobby). `seat`: "first",
        "second" or None (drawn). `expires_in_s`: 10 s to 24 h (default 5 minutes, open ones 30).
        Retried with the same request id, it is made once. Refusals: CHALLENGE_NOT_ALLOWED (they
        take no challenge from you, or there is no such player), CHALLENGE_PENDING (one between
        you waits), RATED_NEEDS_ACCOUNT, BAD_CHALLENGE, BAD_EXPIRY, BAD_LEVEL (a bot: 1-3)."""
        request = challenges_pb2.CreateChallengeRequest(
            request_id=request_id or new_request_id(),
            username=username,
            bot_level=bot_level,
            open=open,
            game=game,
            options=game_options(options),
            rated=rated,
            seat_preference=seat_preference(seat),
        )
        set_time_control(request.time_control, per_move_s, days_per_move)
        if expires_in_s is not None:
            request.expires_in.CopyFrom(duration(expires_in_s))
        return (await self._call(self.challenges.CreateChallenge, request)).challenge  # type: ignore[no-any-return]

    async def accept_challenge(self, challenge_id: str) -> challenges_pb2.Challenge:
        """Accept a challenge to you (or an open one): its game starts at once (`game_id`)."""
        request = challenges_pb2.AcceptChallengeRequest(challenge_id=challenge_id)
        return (await self._call(self.challenges.AcceptChallenge, request)).challenge  # type: ignore[no-any-return]

    async def decline_challenge(
        self, challenge_id: str, reason: str | challenges_pb2.DeclineReason.ValueType = "generic"
    ) -> challenges_pb2.Challenge:
        """Decline a challenge to you with a reason ("generic", "later", "too_fast", "too_slow",
        "casual_only", "rated_only", "not_this_game", "no_bots"), which the challenger is shown."""
        request = challenges_pb2.DeclineChallengeRequest(challenge_id=challenge_id, reason=decline_reason(reason))
        return await self._end_challenge(
            self.challenges.DeclineChallenge, request, challenges_pb2.CHALLENGE_STATUS_DECLINED
        )

    async def cancel_challenge(self, challenge_id: str) -> challenges_pb2.Challenge:
        """Withdraw a challenge you made while it is pending."""
        request = challenges_pb2.CancelChallengeRequest(challenge_id=challenge_id)
        return await self._end_challenge(
            self.challenges.CancelChallenge, request, challenges_pb2.CHALLENGE_STATUS_CANCELLED
        )

    async def _end_challenge(
        self, method: Any, request: Message, status: challenges_pb2.ChallengeStatus.ValueType
    ) -> challenges_pb2.Challenge:
        try:
            return (await self._call(method, request)).challenge  # type: ignore[no-any-return]
        except IllegalMove as error:
            # A resend whose first try did it is refused CHALLENGE_NOT_PENDING: answer as the first.
            if error.reason != "CHALLENGE_NOT_PENDING":
                raise
            challenge = await self.get_challenge(request.challenge_id)  # type: ignore[attr-defined]
            if challenge.status != status:
                raise
            return challenge

    async def get_challenge(self, challenge_id: str) -> challenges_pb2.Challenge:
        request = challenges_pb2.GetChallengeRequest(challenge_id=challenge_id)
        return (await self._call(self.challenges.GetChallenge, request)).challenge  # type: ignore[no-any-return]

    async def list_challenges(self) -> challenges_pb2.ListChallengesResponse:
        """Your pending challenges: `.incoming` (to you) and `.outgoing` (by you), oldest first."""
        request = challenges_pb2.ListChallengesRequest()
        return await self._call(self.challenges.ListChallenges, request)  # type: ignore[no-any-return]

    async def list_open_challenges(self, game: str = "") -> list[challenges_pb2.Challenge]:
        """Open challenges anyone may take (accept_challenge), newest first."""
        request = challenges_pb2.ListOpenChallengesRequest(game=game)
        return list((await self._call(self.challenges.ListOpenChallenges, request)).challenges)

    # -- chat, following, profiles and settings -----------------------------------------------------

    async def send_chat(
        self, channel: social_pb2.ChatChannel, text: str, *, request_id: str | None = None
    ) -> social_pb2.ChatMessage:
        """Say `text` in `channel` (`tafel.chat.channel("players", game_id)`; "spectators", "room",
        "tournament"). Retried with the same request id, it is said once: the answer is the first
        message. Refusals: CHAT_NEEDS_ACCOUNT (guests read only), CHAT_NOT_ALLOWED (a player in the
        spectators' channel, a spectator in the players'), CHAT_CHANNEL_NOT_FOUND, CHAT_OFF (your
        settings), CHAT_EMPTY, CHAT_TOO_LONG (500 characters), CHAT_TOO_FAST (`error.metadata
        ["retry_after_ms"]`), CHAT_MUTED (a moderator's mute, `error.until`)."""
        request = social_pb2.SendChatMessageRequest(
            request_id=request_id or new_request_id(), channel=channel, text=text
        )
        return (await self._call(self.chat.SendChatMessage, request)).message  # type: ignore[no-any-return]

    def chat_stream(
        self,
        channel: social_pb2.ChatChannel,
        after_message_id: str = "",
        *,
        max_retries: int | None = STREAM_ATTEMPTS,
        on_connection: Callable[[bool], Awaitable[None]] | None = None,
        on_ready: Callable[[social_pb2.ChatReady], None] | None = None,
    ) -> ChatStream:
        """A channel's messages after `after_message_id` (empty: its latest 100 as history), then
        live ones, resuming by itself after a cut or a stopping gateway from the last message
        handed out; use as `async with client.chat_stream(channel) as chat: async for message in
        chat` (tafel/chat.py). `chat.ready` says whether you may write (`can_write`) and whether
        you turned chat off (`chat_off`); `on_ready` is called with each one. `max_retries` and
        `on_connection` as for `watch_with_deadlines`."""
        return ChatStream(
            self,
            channel,
            after_message_id,
            max_retries=self._limit(max_retries),
            on_connection=on_connection,
            on_ready=on_ready,
        )

    async def watch_chat(
        self, channel: social_pb2.ChatChannel, after_message_id: str = "", **kwargs: Any
    ) -> AsyncIterator[social_pb2.ChatMessage]:
        """A channel's messages as a plain iterator (`chat_stream` without the `async with`)."""
        async with self.chat_stream(channel, after_message_id, **kwargs) as chat:
            async for message in chat:
                yield message

    async def list_chat(
        self, channel: social_pb2.ChatChannel, after_message_id: str = "", *, page_size: int = 0
    ) -> social_pb2.ListChatMessagesResponse:
        """A channel's kept messages after `after_message_id` (empty: from the oldest kept), oldest
        first, at most `page_size` (0: 100; at most 500); `.more` says whether more follow (ask
        again after the last one's id). A replay reads a finished game's channels this way."""
        request = social_pb2.ListChatMessagesRequest(
            channel=channel, after_message_id=after_message_id, page_size=page_size
        )
        return await self._call(self.chat.ListChatMessages, request)  # type: ignore[no-any-return]

    async def follow(self, username: str) -> social_pb2.FollowedPlayer:
        """Follow a player: their presence in `list_following`, and a `presence` event on your
        event stream whenever it changes. They are not told. Following again changes nothing.
        Refusals: PLAYER_NOT_FOUND, FOLLOW_NEEDS_ACCOUNT (guests), TOO_MANY_FOLLOWS (1,000)."""
        request = social_pb2.FollowRequest(username=username)
        return (await self._call(self.friends.Follow, request)).followed  # type: ignore[no-any-return]

    async def unfollow(self, username: str) -> None:
        await self._call(self.friends.Unfollow, social_pb2.UnfollowRequest(username=username))

    async def list_following(self) -> list[social_pb2.FollowedPlayer]:
        """The players you follow with their presence: playing first, then online, then by last seen."""
        response = await self._call(self.friends.ListFollowing, social_pb2.ListFollowingRequest())
        return list(response.following)

    async def get_profile(self, username: str) -> social_pb2.Profile:
        """A player's public page: display name, joined, presence, ratings with their history,
        last games, and (for you) your results against them and whether you follow each other.
        Guests have none (PLAYER_NOT_FOUND)."""
        request = social_pb2.GetProfileRequest(username=username)
        return (await self._call(self.profiles.GetProfile, request)).profile  # type: ignore[no-any-return]

    async def get_settings(self) -> social_pb2.PlayerSettings:
        """Your settings: chat on or off, who may challenge you, your display name."""
        response = await self._call(self.profiles.GetMySettings, social_pb2.GetMySettingsRequest())
        return response.settings  # type: ignore[no-any-return]

    async def update_settings(
        self,
        *,
        chat_enabled: bool | None = None,
        challenge_policy: str | social_pb2.ChallengePolicy.ValueType | None = None,
    ) -> social_pb2.PlayerSettings:
        """Change what is given (the rest stays): `chat_enabled`, and `challenge_policy`, who may
        challenge you by name ("everyone", "followed": the players you follow, "nobody"). The
        display name changes with `set_display_name`. Setting a value is safe to repeat."""
        request = social_pb2.UpdateMySettingsRequest()
        if chat_enabled is not None:
            request.chat_enabled = chat_enabled
        if challenge_policy is not None:
            request.challenge_policy = _challenge_policy(challenge_policy)
        return (await self._call(self.profiles.UpdateMySettings, request)).settings  # type: ignore[no-any-return]

    # -- the inbox, e-mail and vacations ---------------------------------------------------------------

    async def list_notifications(
        self, *, unread_only: bool = False, page_size: int = 50, page_token: str = ""
    ) -> notices_pb2.ListNotificationsResponse:
        """Your notices, newest first (`.notifications`, `.next_page_token`) and `.unread`, the
        badge. New ones also come live on `event_stream()` (`event.notification`), and reads and
        clears made on any client as `event.inbox`."""
        request = notices_pb2.ListNotificationsRequest(
            unread_only=unread_only, page_size=page_size, page_token=page_token
        )
        return await self._call(self.notices.ListNotifications, request)  # type: ignore[no-any-return]

    async def mark_notifications_read(self, *notification_ids: str, all: bool = False) -> int:
        """Mark the notices named (or `all`) read; returns the unread count left. Safe to repeat;
        ids no longer kept are ignored."""
        request = notices_pb2.MarkNotificationsReadRequest(notification_ids=notification_ids, all=all)
        return int((await self._call(self.notices.MarkNotificationsRead, request)).unread)

    async def clear_notifications(self, *notification_ids: str, all: bool = False) -> int:
        """Remove the notices named (or `all`); returns the unread count left. Safe to repeat."""
        request = notices_pb2.ClearNotificationsRequest(notification_ids=notification_ids, all=all)
        return int((await self._call(self.notices.ClearNotifications, request)).unread)

    async def notification_settings(self) -> notices_pb2.NotificationSettings:
        """Which notices reach you and how: a preference per kind (inbox, e-mail), quiet hours,
        your time zone, the daily digest and its hour."""
        response = await self._call(self.notices.GetNotificationSettings, notices_pb2.GetNotificationSettingsRequest())
        return response.settings  # type: ignore[no-any-return]

    async def update_notification_settings(
        self,
        *,
        inbox: dict[str, bool] | None = None,
        email: dict[str, bool] | None = None,
        quiet_hours: tuple[int, int] | bool | None = None,
        time_zone: str | None = None,
        email_digest: bool | None = None,
        digest_hour: int | None = None,
    ) -> notices_pb2.NotificationSettings:
        """Change what is given, keep the rest: `inbox` / `email` map a kind ("your_turn", ...)
        to on or off; `quiet_hours` (start, end) in minutes after local midnight, or False for
        none; `time_zone` an IANA name ("" = UTC); `email_digest` and its local `digest_hour`.
        The server checks the values (BAD_NOTICE_SETTINGS and the like)."""
        settings = notices_pb2.NotificationSettings()
        settings.CopyFrom(await self.notification_settings())
        by_kind = {preference.kind: preference for preference in settings.preferences}
        for channel, changes in (("inbox", inbox), ("email", email)):
            for name, on in (changes or {}).items():
                kind = notification_kind(name)
                preference = by_kind.get(kind)
                if preference is None:
                    preference = by_kind[kind] = settings.preferences.add(kind=kind)
                setattr(preference, channel, on)
        if quiet_hours is not None:
            if isinstance(quiet_hours, bool):
                settings.quiet_hours.enabled = quiet_hours
            else:
                settings.quiet_hours.enabled = True
                settings.quiet_hours.start_minute, settings.quiet_hours.end_minute = quiet_hours
        if time_zone is not None:
            settings.time_zone = time_zone
        if email_digest is not None:
            settings.email_digest = email_digest
        if digest_hour is not None:
            settings.digest_hour = digest_hour
        request = notices_pb2.UpdateNotificationSettingsRequest(settings=settings)
        return (await self._call(self.notices.UpdateNotificationSettings, request)).settings  # type: ignore[no-any-return]

    async def get_email(self) -> notices_pb2.EmailAddress:
        """Your address, whether it is confirmed, and a changed one waiting for its confirmation."""
        return (await self._call(self.email.GetEmail, notices_pb2.GetEmailRequest())).email  # type: ignore[no-any-return]

    async def set_email(self, address: str, *, language: str = "") -> notices_pb2.EmailAddress:
        """Set or change your address ("" removes it): a confirmation link is mailed to it, in
        `language` ("en", "nl", "de"). Setting it again sends the link again (at most 3 an hour:
        EMAIL_TOO_FAST). Accounts only."""
        request = notices_pb2.SetEmailRequest(address=address, language=language)
        return (await self._call(self.email.SetEmail, request)).email  # type: ignore[no-any-return]

    async def confirm_email(self, token: str) -> notices_pb2.ConfirmEmailResponse:
        """Confirm an address with the token from the mailed link (no session needed); safe to
        repeat. The answer names the account (`.username`) and the address (`.email`)."""
        request = notices_pb2.ConfirmEmailRequest(token=token)
        return await self._call(self.email.ConfirmEmail, request)  # type: ignore[no-any-return]

    async def unsubscribe(self, token: str) -> str:
        """Stop the mails of one kind with the token from a mail's link; returns what stopped
        ("digest" or "immediate")."""
        request = notices_pb2.UnsubscribeRequest(token=token)
        return str((await self._call(self.email.Unsubscribe, request)).stopped)

    async def vacation(self) -> notices_pb2.Vacation:
        """Whether you are on vacation, since and until when, and this year's allowance left."""
        return (await self._call(self.vacations.GetVacation, notices_pb2.GetVacationRequest())).vacation  # type: ignore[no-any-return]

    async def start_vacation(self, hours: float | None = None) -> notices_pb2.Vacation:
        """Go on vacation now, for `hours` (whole hours) or until ended or the year's allowance
        is used up: the clocks of your games of a day or more a move stand still. Safe to repeat
        while away. Accounts only."""
        request = notices_pb2.StartVacationRequest()
        if hours is not None:
            request.duration.CopyFrom(duration(round(hours) * 3600))
        return (await self._call(self.vacations.StartVacation, request)).vacation  # type: ignore[no-any-return]

    async def end_vacation(self) -> notices_pb2.Vacation:
        """Come back: your clocks run again from where they stood. Safe to repeat."""
        return (await self._call(self.vacations.EndVacation, notices_pb2.EndVacationRequest())).vacation  # type: ignore[no-any-return]

    # -- ratings and tournaments --------------------------------------------------------------------

    async def leaderboard(
        self, game: str, *, page_size: int = 20, page_token: str = ""
    ) -> tournaments_pb2.GetLeaderboardResponse:
        request = tournaments_pb2.GetLeaderboardRequest(
            leaderboard=game, include_provisional=True, page_size=page_size, page_token=page_token
        )
        return await self._call(self.ratings.GetLeaderboard, request)  # type: ignore[no-any-return]

    async def create_tournament(self, **fields: Any) -> tournaments_pb2.Tournament:
        """Fields of CreateTournamentRequest (name, game, format, rounds, capacity, ...)."""
        request = tournaments_pb2.CreateTournamentRequest(request_id=new_request_id(), **fields)
        return (await self._call(self.tournaments.CreateTournament, request)).tournament  # type: ignore[no-any-return]

    async def list_tournaments(self, *, page_size: int = 50, page_token: str = "") -> list[tournaments_pb2.Tournament]:
        request = tournaments_pb2.ListTournamentsRequest(page_size=page_size, page_token=page_token)
        return list((await self._call(self.tournaments.ListTournaments, request)).tournaments)

    async def get_tournament(self, tournament_id: str) -> tournaments_pb2.Tournament:
        request = tournaments_pb2.GetTournamentRequest(tournament_id=tournament_id)
        return (await self._call(self.tournaments.GetTournament, request)).tournament  # type: ignore[no-any-return]

    async def join_tournament(self, tournament_id: str, *, invitation_code: str = "") -> tournaments_pb2.Tournament:
        """Refusals in words: REGISTRATION_NOT_OPEN (metadata "opens_at"), NOT_REGISTERING,
        RATING_TOO_LOW ("min_rating"), TOO_FEW_RATED_GAMES ("min_rated_games"), BAD_INVITATION_CODE,
        BANNED_FROM_TOURNAMENT, TOURNAMENT_FULL."""
        request = tournaments_pb2.JoinTournamentRequest(tournament_id=tournament_id, invitation_code=invitation_code)
        return (await self._call(self.tournaments.JoinTournament, request)).tournament  # type: ignore[no-any-return]

    async def leave_tournament(self, tournament_id: str) -> None:
        await self._call(
            self.tournaments.LeaveTournament, tournaments_pb2.LeaveTournamentRequest(tournament_id=tournament_id)
        )

    async def start_tournament(self, tournament_id: str) -> tournaments_pb2.Tournament:
        request = tournaments_pb2.StartTournamentRequest(tournament_id=tournament_id)
        return (await self._call(self.tournaments.StartTournament, request)).tournament  # type: ignore[no-any-return]

    async def standings(self, tournament_id: str) -> tournaments_pb2.GetStandingsResponse:
        request = tournaments_pb2.GetStandingsRequest(tournament_id=tournament_id)
        return await self._call(self.tournaments.GetStandings, request)  # type: ignore[no-any-return]

    async def tournament_round(self, tournament_id: str, round_number: int = 0) -> tournaments_pb2.TournamentRound:
        """One round's pairings and results (0 = the current round)."""
        request = tournaments_pb2.GetRoundRequest(tournament_id=tournament_id, round=round_number)
        return (await self._call(self.tournaments.GetRound, request)).round  # type: ignore[no-any-return]

    async def tournament_games(
        self, tournament_id: str, *, round_number: int = 0, player_id: str = "", page_size: int = 100
    ) -> list[tournaments_pb2.TournamentGame]:
        """Every game of the tournament (or of one round, or one player's), all pages read."""
        games: list[tournaments_pb2.TournamentGame] = []
        token = ""
        while True:
            request = tournaments_pb2.ListTournamentGamesRequest(
                tournament_id=tournament_id,
                round=round_number,
                player_id=player_id,
                page_size=page_size,
                page_token=token,
            )
            answer = await self._call(self.tournaments.ListTournamentGames, request)
            games.extend(answer.games)
            token = answer.next_page_token
            if not token:
                return games

    async def export_tournament(
        self, tournament_id: str, *, format: str = "csv", parts: Sequence[str] = ()
    ) -> dict[str, bytes]:
        """Standings, pairings and every game's record (`parts`: "standings", "pairings", "games";
        none = all three) as CSV or JSON: {file name: the whole file}, assembled from the streamed
        chunks. A dropped stream is asked again from the start (the export reads the same)."""
        formats = {"csv": tournaments_pb2.EXPORT_FORMAT_CSV, "json": tournaments_pb2.EXPORT_FORMAT_JSON}
        part_names = {
            "standings": tournaments_pb2.EXPORT_PART_STANDINGS,
            "pairings": tournaments_pb2.EXPORT_PART_PAIRINGS,
            "games": tournaments_pb2.EXPORT_PART_GAMES,
        }
        if format not in formats or any(p not in part_names for p in parts):
            raise TafelError("BAD_EXPORT", "choose csv or json, and parts among standings, pairings, games")
        request = tournaments_pb2.ExportTournamentRequest(
            tournament_id=tournament_id, format=formats[format], parts=[part_names[p] for p in parts]
        )
        attempts = Attempts(self._limit(STREAM_ATTEMPTS))
        while True:
            files: dict[str, bytearray] = {}
            call = self.tournaments.ExportTournament(request, metadata=self.metadata())
            try:
                async for chunk in call:
                    files.setdefault(chunk.file_name, bytearray()).extend(chunk.data)
                self._reached = True
                return {name: bytes(data) for name, data in files.items()}
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRYABLE or attempts.exhausted:
                    raise from_rpc_error(error) from None
            finally:
                call.cancel()
            await attempts.failed()

    async def pause_arena_play(self, tournament_id: str, paused: bool = True) -> tournaments_pb2.Tournament:
        """An arena's player steps away (not paired again) or comes back (`paused=False`)."""
        request = tournaments_pb2.PauseArenaPlayRequest(tournament_id=tournament_id, paused=paused)
        return (await self._call(self.tournaments.PauseArenaPlay, request)).tournament  # type: ignore[no-any-return]

    # -- directing a tournament (its organiser, or an organiser or admin role) ----------------------

    async def update_tournament(self, tournament_id: str, **fields: Any) -> tournaments_pb2.Tournament:
        """Change the fields given (CreateTournamentRequest names: name, capacity, rounds,
        starts_at, registration_opens_at, entry, invitation_code, late_join_until_round,
        round_start_times, manual_rounds, ...); the update mask is the names given, so a field
        given its zero value is cleared."""
        if not fields:
            raise TafelError("BAD_UPDATE_MASK", "name at least one field to change")
        settings = tournaments_pb2.CreateTournamentRequest(**fields)
        request = tournaments_pb2.UpdateTournamentRequest(tournament_id=tournament_id, settings=settings)
        request.update_mask.paths.extend(fields)
        return (await self._call(self.tournaments.UpdateTournament, request)).tournament  # type: ignore[no-any-return]

    async def remove_player(
        self, tournament_id: str, player_id: str, *, ban: bool = False, reason: str = ""
    ) -> tournaments_pb2.Tournament:
        """Withdraw a player (before the start: unregister them); `ban`: never to join again."""
        request = tournaments_pb2.RemovePlayerRequest(
            tournament_id=tournament_id, player_id=player_id, ban=ban, reason=reason
        )
        return (await self._call(self.tournaments.RemovePlayer, request)).tournament  # type: ignore[no-any-return]

    async def pause_tournament(self, tournament_id: str) -> tournaments_pb2.Tournament:
        request = tournaments_pb2.PauseTournamentRequest(tournament_id=tournament_id)
        return (await self._call(self.tournaments.PauseTournament, request)).tournament  # type: ignore[no-any-return]

    async def resume_tournament(self, tournament_id: str) -> tournaments_pb2.Tournament:
        request = tournaments_pb2.ResumeTournamentRequest(tournament_id=tournament_id)
        return (await self._call(self.tournaments.ResumeTournament, request)).tournament  # type: ignore[no-any-return]

    async def start_next_round(self, tournament_id: str) -> tournaments_pb2.StartNextRoundResponse:
        """Not resent (a second try could start the round after): ROUND_IN_PROGRESS while the
        current round's games are played, NO_NEXT_ROUND after the last."""
        request = tournaments_pb2.StartNextRoundRequest(tournament_id=tournament_id)
        return await self._call(self.tournaments.StartNextRound, request)  # type: ignore[no-any-return]

    async def terminate_tournament(self, tournament_id: str, reason: str = "") -> tournaments_pb2.Tournament:
        """End it now with final standings. A retry whose first try did its work is refused
        NOT_RUNNING: the tournament, terminated, is the answer the first try would have given."""
        request = tournaments_pb2.TerminateTournamentRequest(tournament_id=tournament_id, reason=reason)
        try:
            return (await self._call(self.tournaments.TerminateTournament, request)).tournament  # type: ignore[no-any-return]
        except TafelError as error:
            if error.reason != "NOT_RUNNING":
                raise
            tournament = await self.get_tournament(tournament_id)
            if not tournament.terminated:
                raise
            return tournament

    async def correct_result(
        self,
        tournament_id: str,
        *,
        round_number: int,
        board: int,
        ranks: Sequence[int],
        reason: str,
        decider: int = 0,
    ) -> tournaments_pb2.CorrectResultResponse:
        """Decide a game by hand: `ranks` per seat (1 = best; a two-player draw is [1, 1]);
        the arena's games are round 0. Safe to repeat (the same ranks change nothing)."""
        request = tournaments_pb2.CorrectResultRequest(
            tournament_id=tournament_id, round=round_number, board=board, decider=decider, ranks=ranks, reason=reason
        )
        return await self._call(self.tournaments.CorrectResult, request)  # type: ignore[no-any-return]

    async def announce(self, tournament_id: str, text: str, *, request_id: str = "") -> int:
        """A message to every participant; the number it went to. A retry reuses the request id,
        so it is sent once. ANNOUNCEMENTS_TOO_FAST: wait the metadata "retry_after_ms"."""
        request = tournaments_pb2.AnnounceRequest(
            tournament_id=tournament_id, text=text, request_id=request_id or new_request_id()
        )
        return int((await self._call(self.tournaments.Announce, request)).recipients)

    async def tournament_audit(self, tournament_id: str) -> list[tournaments_pb2.TournamentAuditEntry]:
        """The directors' actions on this tournament, oldest first (directors only)."""
        request = tournaments_pb2.ListTournamentAuditRequest(tournament_id=tournament_id)
        return list((await self._call(self.tournaments.ListTournamentAudit, request)).entries)

    async def watch_tournament(
        self,
        tournament_id: str,
        after_event_id: str = "",
        *,
        max_retries: int | None = STREAM_ATTEMPTS,
        on_connection: Callable[[bool], Awaitable[None]] | None = None,
    ) -> AsyncIterator[tournaments_pb2.TournamentEvent]:
        """A tournament's events (joins, rounds with their games, results, standings), resuming
        by itself after a dropped connection from the last event seen; ends after the tournament
        finishes. `max_retries` and `on_connection` as for `watch_with_deadlines` (live again once
        a gateway has taken the resumed watch, before any event: a quiet tournament sends none)."""
        last = after_event_id
        attempts = Attempts(self._limit(max_retries))
        link = Link(on_connection)
        while True:
            call: Any = None
            try:
                if link.lost:
                    # A watch says nothing until the next event, which a quiet tournament may not
                    # have for long: a gateway answering a read first says the feed is live again
                    # (and the watch then opens on a gateway that is there).
                    request = tournaments_pb2.GetTournamentRequest(tournament_id=tournament_id)
                    await self.tournaments.GetTournament(request, metadata=self.metadata(), timeout=5.0)
                    await link.up()
                call = self.tournaments.WatchTournament(
                    tournaments_pb2.WatchTournamentRequest(tournament_id=tournament_id, after_event_id=last),
                    metadata=self.metadata(),
                )
                async for response in call:
                    attempts.reset()
                    await link.up()
                    last = response.event.event_id
                    yield response.event
                    if response.event.WhichOneof("kind") in ("finished", "cancelled"):
                        return
                return
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRYABLE or attempts.exhausted:
                    raise from_rpc_error(error) from None
            finally:
                if call is not None:
                    call.cancel()
            await link.down()
            await attempts.failed()

    def play_stream(
        self, *, batch_responses: bool = True, on_connection: Callable[[bool], object] | None = None
    ) -> PlayStream:
        """The bidirectional play stream (use as `async with client.play_stream() as stream`).
        `batch_responses`: let the gateway send responses ready together in one message (an
        action's answer with its own events), which saves a message per move. `on_connection`:
        called with False when the stream is lost, True once a gateway answers again. A patient
        client's stream never stops reconnecting."""
        limit = None if self.patient else MAX_RECONNECTS
        return PlayStream(self, batch_responses=batch_responses, max_reconnects=limit, on_connection=on_connection)

    async def watch_with_deadlines(
        self,
        game_id: str,
        after_event_id: str = "",
        *,
        stop_at_end: bool = True,
        max_retries: int | None = 20,
        on_connection: Callable[[bool], Awaitable[None]] | None = None,
    ) -> AsyncIterator[play_pb2.WatchGameResponse]:
        """A game's events from after `after_event_id`, resuming by itself after a dropped
        connection from the last event seen: nothing lost, nothing repeated.

        `max_retries`: consecutive failed attempts before it gives up (None: never; for a person's
        screen, which can be left). `on_connection(False)` is awaited when the watch is lost and it
        starts reconnecting, `on_connection(True)` when the watch is live again (the gateway has
        subscribed it, before any event), so a screen can say "Reconnecting…" meanwhile and read
        the game afresh once back."""
        last = after_event_id
        attempts = Attempts(self._limit(max_retries))
        lost = False
        while True:
            call = self.games.WatchGame(
                play_pb2.WatchGameRequest(game_id=game_id, after_event_id=last), metadata=self.metadata()
            )
            try:
                if lost:
                    # The gateway sends its headers once the watch is subscribed; a failed call
                    # gets empty ones and is done by then (its status raises just below).
                    await call.initial_metadata()
                    if not call.done():
                        lost = False
                        attempts.reset()
                        if on_connection is not None:
                            await on_connection(True)
                async for response in call:
                    attempts.reset()
                    self._reached = True
                    if last and not is_after(response.event.event_id, last):
                        continue  # defensive: never hand the caller an event twice
                    last = response.event.event_id
                    yield response
                    if stop_at_end and response.event.WhichOneof("kind") == "ended":
                        return
                ended = True
            except grpc.aio.AioRpcError as error:
                # CANCELLED: the server's (a gateway whose stop grace ran out), as this side
                # cancels the call only once the caller is gone.
                if error.code() not in STREAM_RETRYABLE or attempts.exhausted:
                    raise from_rpc_error(error) from None
                ended = False
            finally:
                call.cancel()
            # An error is never the game's end (the server ends a watch with OK after the game's
            # last event); an OK end may be a gateway stopping: ask whether the game is over.
            if ended and await self._watched_to_the_end(game_id, last):
                return
            if not lost:
                lost = True
                if on_connection is not None:
                    await on_connection(False)
            if attempts.exhausted:
                raise Unavailable("UNAVAILABLE", f"the watch of {game_id} could not be resumed")
            await attempts.failed()

    async def _watched_to_the_end(self, game_id: str, last: str) -> bool:
        try:
            game = await self.get_game(game_id)
        except Unavailable:
            return False  # no gateway to ask right now: watching again will tell
        if not game.summary.status.over:
            return False
        return not game.last_event_id or (bool(last) and not is_after(game.last_event_id, last))

    async def watch(
        self, game_id: str, after_event_id: str = "", *, stop_at_end: bool = True
    ) -> AsyncIterator[games_pb2.GameEvent]:
        async for response in self.watch_with_deadlines(game_id, after_event_id, stop_at_end=stop_at_end):
            yield response.event
