"""FriendService (follow, unfollow, the list with presence) and ProfileService (a player's public
page, one's own settings). Every caller is signed in (guests too); guests neither follow nor are
followed, and have no profile. A block either way hides presence both ways."""

from __future__ import annotations

from typing import Any

import grpc
from tafel.play.v1 import play_pb2, social_pb2, social_pb2_grpc

from gateway.auth import Authenticator, Identity
from gateway.people.presence import Presence
from gateway.people.store import PeopleStore, is_guest_name, needs_account
from gateway.ratings.book import RatingBook
from gateway.ratings.service import rating_message
from gateway.records import ABORTED, visible_to
from gateway.standing.store import AccountRow, StandingStore, not_found
from kit.errors import invalid, refusing
from kit.redis.keys import account_key, record_key, records_index_key
from kit.redis.layer import RedisLayer
from kit.redis.replies import text

UNAVAILABLE = "players' pages and follows are unavailable; retry"
RECENT_GAMES = 10
HEAD_TO_HEAD_GAMES = 500
STATE_ORDER = {social_pb2.PRESENCE_STATE_PLAYING: 0, social_pb2.PRESENCE_STATE_ONLINE: 1}


def result_of(record: play_pb2.GameRecord, player_id: str) -> int:
    """The player's result in a finished game."""
    ranks = list(record.outcome.ranks)
    seats = [s.seat for s in record.players if s.player.player_id == player_id]
    if record.outcome.reason == ABORTED or not seats or len(ranks) != len(record.players):
        return social_pb2.GAME_RESULT_OTHER
    mine, best = ranks[seats[0]], min(ranks)
    if all(rank == best for rank in ranks):
        return social_pb2.GAME_RESULT_DRAW
    winners = ranks.count(best)
    if mine == best and winners == 1:
        return social_pb2.GAME_RESULT_WIN
    # Someone else won outright (in a game of two, the other player won).
    return social_pb2.GAME_RESULT_LOSS if winners == 1 else social_pb2.GAME_RESULT_OTHER


class PeopleServicer(social_pb2_grpc.FriendServiceServicer, social_pb2_grpc.ProfileServiceServicer):
    def __init__(
        self,
        auth: Authenticator,
        redis: RedisLayer,
        people: PeopleStore,
        presence: Presence,
        standing: StandingStore,
        book: RatingBook,
    ) -> None:
        self.auth = auth
        self.redis = redis
        self.people = people
        self.presence = presence
        self.standing = standing
        self.book = book

    async def _account(self, username: str) -> AccountRow:
        """An account by username (a guest's name: PLAYER_NOT_FOUND, as a guest has no page)."""
        name = username.strip()
        if not name:
            raise invalid("BAD_USERNAME", "name a player", field="username")
        found = None if is_guest_name(name) else await self.standing.account(name)
        if found is None:
            raise not_found(username)
        return found

    async def _target(self, me: Identity, username: str) -> AccountRow:
        if me.guest:
            raise needs_account()
        if is_guest_name(username):
            raise needs_account()
        target = await self._account(username)
        if target.player_id == me.player_id:
            raise invalid("SELF_NOT_ALLOWED", "you cannot follow yourself", field="username")
        return target

    async def _player(self, row: AccountRow) -> play_pb2.Player:
        player = row.player()
        player.display_name = await self.people.display_name(row.username)
        return player

    # -- FriendService -----------------------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def Follow(
        self, request: social_pb2.FollowRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> social_pb2.FollowResponse:
        me = self.auth.identity(context.invocation_metadata())
        target = await self._target(me, request.username)
        followed = await self.people.follow(me.player_id, target.player_id, target.username)
        out = social_pb2.FollowedPlayer(player=await self._player(target))
        out.followed_at.FromMilliseconds(followed.at_ms)
        if target.player_id not in await self.standing.avoided(me.player_id):
            out.presence.CopyFrom((await self.presence.read([target.player_id]))[target.player_id])
        return social_pb2.FollowResponse(followed=out)

    @refusing(UNAVAILABLE)
    async def Unfollow(
        self, request: social_pb2.UnfollowRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> social_pb2.UnfollowResponse:
        me = self.auth.identity(context.invocation_metadata())
        target = await self._target(me, request.username)
        await self.people.unfollow(me.player_id, target.player_id)
        return social_pb2.UnfollowResponse()

    @refusing(UNAVAILABLE)
    async def ListFollowing(
        self, request: social_pb2.ListFollowingRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> social_pb2.ListFollowingResponse:
        me = self.auth.identity(context.invocation_metadata())
        if me.guest:
            return social_pb2.ListFollowingResponse()
        followed = await self.people.following(me.player_id)
        if not followed:
            return social_pb2.ListFollowingResponse()
        avoided = await self.standing.avoided(me.player_id)
        presences = await self.presence.read(f.player_id for f in followed)
        names = await self.redis.many([("HGET", account_key(f.username), "dn") for f in followed])
        out: list[social_pb2.FollowedPlayer] = []
        for entry, display in zip(followed, names, strict=True):
            item = social_pb2.FollowedPlayer(
                player=play_pb2.Player(
                    player_id=entry.player_id,
                    username=entry.username,
                    display_name=text(display) if display is not None else "",
                )
            )
            item.followed_at.FromMilliseconds(entry.at_ms)
            if entry.player_id not in avoided:
                item.presence.CopyFrom(presences[entry.player_id])
            out.append(item)

        def order(item: social_pb2.FollowedPlayer) -> tuple[int, int, str]:
            seen = item.presence.last_seen.ToMilliseconds() if item.presence.HasField("last_seen") else 0
            return STATE_ORDER.get(item.presence.state, 2), -seen, item.player.username.lower()

        out.sort(key=order)
        return social_pb2.ListFollowingResponse(following=out)

    # -- ProfileService ----------------------------------------------------------------------------

    @refusing(UNAVAILABLE)
    async def GetProfile(
        self, request: social_pb2.GetProfileRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> social_pb2.GetProfileResponse:
        me = self.auth.identity(context.invocation_metadata())
        row = await self._account(request.username)
        pid = row.player_id
        profile = social_pb2.Profile(player=await self._player(row))
        if row.joined_ms:
            profile.joined_at.FromMilliseconds(row.joined_ms)
        avoided = await self.standing.avoided(me.player_id)
        if pid not in avoided:
            profile.presence.CopyFrom((await self.presence.read([pid]))[pid])
        await self._ratings(profile, pid)
        await self._recent(profile, pid, me.player_id)
        profile.followers = await self.people.follower_count(pid)
        if pid != me.player_id:
            await self._against(profile, pid, me.player_id)
            if not me.guest:
                profile.followed_by_you = await self.people.follows(me.player_id, pid)
                profile.follows_you = await self.people.follows(pid, me.player_id)
            profile.challengeable = pid not in avoided and await self.people.may_challenge(me.player_id, pid)
        return social_pb2.GetProfileResponse(profile=profile)

    async def _ratings(self, profile: social_pb2.Profile, player_id: str) -> None:
        games = {pool.name: pool.game for pool in await self.book.pools.listed()}
        for pool, stored, rank in await self.book.ratings_of(player_id):
            rating = social_pb2.ProfileRating(
                rating=rating_message(pool, stored, rank, self.book.provisional_rd), game=games.get(pool, "")
            )
            for point in await self.book.history(pool, player_id):
                added = rating.history.add(rating=point.rating, game_id=point.game_id)
                added.at.FromMilliseconds(point.at_ms)
            profile.ratings.append(rating)

    async def _records(self, player_id: str, count: int) -> list[play_pb2.GameRecord]:
        ids: Any = await self.redis.call("ZREVRANGE", records_index_key(player_id), 0, count - 1)
        records: list[play_pb2.GameRecord] = []
        for start in range(0, len(ids), 100):
            # GETs, not one MGET: each record is in its own slot on a cluster (one round trip still).
            raw = await self.redis.many([("GET", record_key(text(g))) for g in ids[start : start + 100]])
            records.extend(play_pb2.GameRecord.FromString(r) for r in raw if r is not None)
        return records

    async def _recent(self, profile: social_pb2.Profile, player_id: str, viewer: str) -> None:
        # A few more than shown: private games the viewer did not play in are left out.
        for record in await self._records(player_id, RECENT_GAMES * 3):
            if not visible_to(record, viewer):
                continue
            game = profile.recent_games.add(
                game_id=record.game_id, game=record.game, result=result_of(record, player_id), rated=record.rated
            )
            game.players.extend(record.players)
            game.ended_at.CopyFrom(record.ended_at)
            if len(profile.recent_games) == RECENT_GAMES:
                break

    async def _against(self, profile: social_pb2.Profile, player_id: str, me: str) -> None:
        wins = losses = draws = 0
        for record in await self._records(player_id, HEAD_TO_HEAD_GAMES):
            ranks = list(record.outcome.ranks)
            if record.outcome.reason == ABORTED or len(ranks) != len(record.players):
                continue
            theirs = [s.seat for s in record.players if s.player.player_id == player_id]
            mine = [s.seat for s in record.players if s.player.player_id == me]
            if not theirs or not mine:
                continue
            difference = ranks[mine[0]] - ranks[theirs[0]]
            wins, losses, draws = wins + (difference < 0), losses + (difference > 0), draws + (difference == 0)
        profile.against_you.CopyFrom(social_pb2.HeadToHead(wins=wins, losses=losses, draws=draws))

    @refusing(UNAVAILABLE)
    async def GetMySettings(
        self, request: social_pb2.GetMySettingsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> social_pb2.GetMySettingsResponse:
        me = self.auth.identity(context.invocation_metadata())
        return social_pb2.GetMySettingsResponse(settings=await self._settings(me))

    @refusing(UNAVAILABLE)
    async def UpdateMySettings(
        self, request: social_pb2.UpdateMySettingsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> social_pb2.UpdateMySettingsResponse:
        me = self.auth.identity(context.invocation_metadata())
        chat = request.chat_enabled if request.HasField("chat_enabled") else None
        await self.people.update_settings(me, chat, int(request.challenge_policy))
        return social_pb2.UpdateMySettingsResponse(settings=await self._settings(me))

    async def _settings(self, me: Identity) -> social_pb2.PlayerSettings:
        chat, policy = await self.people.settings(me.player_id)
        display = me.display_name if me.guest else await self.people.display_name(me.username)
        return social_pb2.PlayerSettings(chat_enabled=chat, challenge_policy=policy, display_name=display)  # type: ignore[arg-type]
