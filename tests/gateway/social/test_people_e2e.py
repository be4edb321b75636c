"""Following, presence, profiles and settings through real gateways: follow/unfollow/list and every
refusal; a followed player's presence online -> playing -> online -> offline on the follower's
event stream, in order; a block hides presence both ways and sends nothing; a gateway killed with
-9 turns its players offline within the lease and the sweep, while a player also on another
gateway stays online (until that one stops gracefully); a profile's ratings with their history after two rated games, its recent
games and head-to-head; settings and the challenge policy."""

from __future__ import annotations

import asyncio
import time

import grpc
from tafel.play.v1 import challenges_pb2, challenges_pb2_grpc, play_pb2, play_pb2_grpc, safety_pb2, social_pb2
from tafel.play.v1 import social_pb2_grpc as social_grpc

from kit.redis.keys import following_key
from kit.redis.layer import RedisLayer
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import failure, spawn_gateway
from tests.gateway.social.streams import Events
from tests.gateway.standing.helpers import Person, register

S = social_pb2
ONLINE, PLAYING, OFFLINE = S.PRESENCE_STATE_ONLINE, S.PRESENCE_STATE_PLAYING, S.PRESENCE_STATE_OFFLINE


def friends(person: Person) -> social_grpc.FriendServiceStub:
    return social_grpc.FriendServiceStub(person.channel)


def profiles(person: Person) -> social_grpc.ProfileServiceStub:
    return social_grpc.ProfileServiceStub(person.channel)


async def follow(by: Person, whom: Person | str) -> S.FollowedPlayer:
    name = whom if isinstance(whom, str) else whom.name
    return (await friends(by).Follow(S.FollowRequest(username=name), metadata=by.md, timeout=10)).followed


async def following(by: Person) -> list[S.FollowedPlayer]:
    return list((await friends(by).ListFollowing(S.ListFollowingRequest(), metadata=by.md, timeout=10)).following)


async def profile(by: Person, whom: Person) -> S.Profile:
    request = S.GetProfileRequest(username=whom.name)
    return (await profiles(by).GetProfile(request, metadata=by.md, timeout=10)).profile


async def guest(address: str) -> Person:
    channel = grpc.aio.insecure_channel(address)
    session = (await play_pb2_grpc.AccountServiceStub(channel).SignInAsGuest(play_pb2.SignInAsGuestRequest())).session
    return Person(channel, session)


async def start_game(by: Person, to: Person, *, rated: bool = False, request_id: str = "g") -> str:
    """A challenge accepted: the game runs on the gateways' own directory (announced)."""
    stub = challenges_pb2_grpc.ChallengeServiceStub(by.channel)
    made = await stub.CreateChallenge(
        challenges_pb2.CreateChallengeRequest(request_id=request_id, game="connect4", username=to.name, rated=rated),
        metadata=by.md,
    )
    accepted = await challenges_pb2_grpc.ChallengeServiceStub(to.channel).AcceptChallenge(
        challenges_pb2.AcceptChallengeRequest(challenge_id=made.challenge.challenge_id), metadata=to.md
    )
    return accepted.challenge.game_id


async def resign(person: Person, game_id: str) -> None:
    await person.games.Resign(play_pb2.ResignRequest(game_id=game_id, request_id="resign"), metadata=person.md)


def presence_of(events: Events, whom: Person) -> list[S.Presence]:
    return [p.presence for p in events.of("presence") if p.player.player_id == whom.session.player.player_id]


async def test_follow_unfollow_list_and_refusals(gw_system: GatewaySystem) -> None:
    address = gw_system.gateways[0].address
    ann, ben = await register(address, "ann"), await register(gw_system.gateways[1].address, "ben")
    first = await follow(ann, ben)
    assert first.player.username == ben.name and first.followed_at.ToMilliseconds() > 0
    again = await follow(ann, ben)  # following again changes nothing
    assert again.followed_at == first.followed_at
    assert [f.player.username for f in await following(ann)] == [ben.name]
    assert (await profile(ann, ben)).followers == 1

    visitor = await guest(address)
    for caller, name, expected in (
        (visitor, ben.name, (grpc.StatusCode.FAILED_PRECONDITION, "FOLLOW_NEEDS_ACCOUNT")),
        (ann, visitor.name, (grpc.StatusCode.FAILED_PRECONDITION, "FOLLOW_NEEDS_ACCOUNT")),
        (ann, "nobody_by_that_name", (grpc.StatusCode.NOT_FOUND, "PLAYER_NOT_FOUND")),
        (ann, ann.name, (grpc.StatusCode.INVALID_ARGUMENT, "SELF_NOT_ALLOWED")),
    ):
        assert await failure(follow(caller, name)) == expected
    code, reason = await failure(profiles(ann).GetProfile(S.GetProfileRequest(username=visitor.name), metadata=ann.md))
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "PLAYER_NOT_FOUND")  # guests have no profile

    # At the most allowed, a new follow is refused; one already made is still fine.
    layer = RedisLayer.connect(gw_system.redis_url, max_connections=2)
    try:
        fake = [part for i in range(999) for part in (f"fake{i:04d}", "1|fake")]
        await layer.call("HSET", following_key(ann.session.player.player_id), *fake)
        carl = await register(address, "carl")
        assert await failure(follow(ann, carl)) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_FOLLOWS")
        await follow(ann, ben)
        await layer.call("HDEL", following_key(ann.session.player.player_id), *fake[::2])
    finally:
        await layer.close()

    await friends(ann).Unfollow(S.UnfollowRequest(username=ben.name), metadata=ann.md)
    await friends(ann).Unfollow(S.UnfollowRequest(username=ben.name), metadata=ann.md)  # idempotent
    assert await following(ann) == []
    assert (await profile(ann, ben)).followers == 0


async def test_presence_online_playing_online_offline_in_order(gw_system: GatewaySystem) -> None:
    fan = await register(gw_system.gateways[0].address, "fan")
    star = await register(gw_system.gateways[1].address, "star")
    rival = await register(gw_system.gateways[0].address, "rival")
    await follow(fan, star)
    fan_events = await Events(fan).started()
    star_events = await Events(star).started()  # star's first stream: online
    await fan_events.until(lambda: presence_of(fan_events, star))
    game_id = await start_game(rival, star)
    await fan_events.until(lambda: len(presence_of(fan_events, star)) >= 2)
    listed = await following(fan)
    assert listed[0].presence.state == PLAYING and listed[0].presence.game_id == game_id
    await resign(star, game_id)
    await fan_events.until(lambda: len(presence_of(fan_events, star)) >= 3)
    before_close = int(time.time() * 1000)
    await star_events.close()
    await fan_events.until(lambda: len(presence_of(fan_events, star)) >= 4)
    seen = presence_of(fan_events, star)
    assert [p.state for p in seen] == [ONLINE, PLAYING, ONLINE, OFFLINE]
    assert seen[1].game_id == game_id and seen[1].game == "connect4" and seen[1].watchable
    assert seen[3].last_seen.ToMilliseconds() >= before_close - 1000
    assert fan_events.of("presence")[0].player.username == star.name
    shown = await profile(fan, star)
    assert shown.presence.state == OFFLINE and shown.presence.last_seen == seen[3].last_seen
    await fan_events.close()


async def test_a_block_hides_presence_both_ways(gw_system: GatewaySystem) -> None:
    address = gw_system.gateways[0].address
    nosy, shy, pal = await register(address, "nosy"), await register(address, "shy"), await register(address, "pal")
    for watcher in (nosy, pal):
        await follow(watcher, shy)
    await follow(shy, nosy)
    await shy.safety.BlockPlayer(safety_pb2.BlockPlayerRequest(username=nosy.name), metadata=shy.md)
    nosy_events, pal_events = await Events(nosy).started(), await Events(pal).started()
    shy_events = await Events(shy).started()
    await pal_events.until(lambda: presence_of(pal_events, shy))  # pal is told: the control
    await shy_events.close()
    await pal_events.until(lambda: len(presence_of(pal_events, shy)) == 2)
    await asyncio.sleep(0.3)
    assert presence_of(nosy_events, shy) == []  # the blocked follower is told nothing
    assert presence_of(shy_events, nosy) == []  # nor the blocker about the one they block
    assert [f.presence.state for f in await following(nosy)] == [S.PRESENCE_STATE_UNSPECIFIED]
    assert [f.presence.state for f in await following(shy)] == [S.PRESENCE_STATE_UNSPECIFIED]
    assert (await profile(nosy, shy)).presence.state == S.PRESENCE_STATE_UNSPECIFIED
    assert (await profile(shy, nosy)).presence.state == S.PRESENCE_STATE_UNSPECIFIED
    assert not (await profile(nosy, shy)).challengeable
    assert (await profile(pal, shy)).presence.state == OFFLINE
    await nosy_events.close()
    await pal_events.close()


async def test_a_killed_gateway_turns_its_players_offline(gw_system: GatewaySystem) -> None:
    lease = {"TAFEL_PRESENCE_LEASE_S": "1.5"}
    doomed = spawn_gateway(gw_system.redis_url, gw_system.routes, name="gateway-doomed", **lease)
    other = spawn_gateway(gw_system.redis_url, gw_system.routes, name="gateway-other", **lease)
    try:
        watcher = await register(gw_system.gateways[0].address, "watcher")
        lone = await register(doomed.address, "lone")  # on the doomed gateway only
        both = await register(doomed.address, "both")  # on both gateways
        both_elsewhere = Person(grpc.aio.insecure_channel(other.address), both.session)
        await follow(watcher, lone)
        await follow(watcher, both)
        events = await Events(watcher).started()
        streams = [await Events(lone).started(), await Events(both).started(), await Events(both_elsewhere).started()]
        await events.until(lambda: presence_of(events, lone) and presence_of(events, both))
        doomed.kill()  # -9: no goodbye, its leases run out
        killed_at = time.monotonic()
        await events.until(lambda: len(presence_of(events, lone)) == 2, timeout_s=10)
        assert time.monotonic() - killed_at < 1.5 + 2.0  # the lease, the sweep and a margin
        assert [p.state for p in presence_of(events, lone)] == [ONLINE, OFFLINE]
        await asyncio.sleep(0.5)
        assert [p.state for p in presence_of(events, both)] == [ONLINE]  # still held by the other
        assert len(presence_of(events, lone)) == 2  # told once, though every gateway sweeps
        by_name = {f.player.username: f.presence.state for f in await following(watcher)}
        assert by_name == {lone.name: OFFLINE, both.name: ONLINE}
        stopping = asyncio.ensure_future(asyncio.to_thread(other.stop))  # a graceful stop lets go at once
        await events.until(lambda: len(presence_of(events, both)) == 2, timeout_s=5)
        assert presence_of(events, both)[1].state == OFFLINE
        await stopping
        for stream in streams:
            await stream.close()
        await events.close()
    finally:
        doomed.kill()
        other.stop()


async def test_profile_ratings_history_recent_games_and_head_to_head(gw_system: GatewaySystem) -> None:
    winner = await register(gw_system.gateways[0].address, "winner")
    loser = await register(gw_system.gateways[1].address, "loser")
    games = []
    for n in range(2):
        game_id = await start_game(winner, loser, rated=True, request_id=f"r{n}")
        await resign(loser, game_id)
        games.append(game_id)
    await follow(loser, winner)
    page = await profile(loser, winner)
    assert page.player.username == winner.name and page.joined_at.ToMilliseconds() > 0
    assert page.followers == 1 and page.follows_you is False and page.followed_by_you is True
    assert page.challengeable
    [rating] = [r for r in page.ratings if r.game == "connect4"]
    assert rating.rating.games == 2
    assert [p.game_id for p in rating.history] == games  # oldest first
    assert rating.history[-1].rating == round(rating.rating.rating, 3)
    assert rating.history[0].rating < rating.history[1].rating  # two wins: up both times
    assert [g.game_id for g in page.recent_games] == games[::-1]  # newest first
    assert all(g.result == S.GAME_RESULT_WIN and g.rated for g in page.recent_games)
    assert [p.player.username for p in page.recent_games[0].players] != []
    # Head-to-head from the caller's side: the loser lost both.
    assert (page.against_you.wins, page.against_you.losses, page.against_you.draws) == (0, 2, 0)
    mine = await profile(winner, loser)
    assert (mine.against_you.wins, mine.against_you.losses) == (2, 0) and mine.follows_you
    assert all(g.result == S.GAME_RESULT_LOSS for g in mine.recent_games)


async def test_settings_and_the_challenge_policy(gw_system: GatewaySystem) -> None:
    address = gw_system.gateways[1].address
    host, friend, stranger = (
        await register(address, "host"),
        await register(address, "friend"),
        await register(address, "stranger"),
    )
    got = (await profiles(host).GetMySettings(S.GetMySettingsRequest(), metadata=host.md)).settings
    assert got.chat_enabled and got.challenge_policy == S.CHALLENGE_POLICY_EVERYONE
    code, reason = await failure(
        profiles(host).UpdateMySettings(S.UpdateMySettingsRequest(challenge_policy=99), metadata=host.md)  # type: ignore[arg-type]
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_CHALLENGE_POLICY")
    updated = await profiles(host).UpdateMySettings(
        S.UpdateMySettingsRequest(challenge_policy=S.CHALLENGE_POLICY_FOLLOWED, chat_enabled=False), metadata=host.md
    )
    assert not updated.settings.chat_enabled and updated.settings.challenge_policy == S.CHALLENGE_POLICY_FOLLOWED
    # Unset fields stay as they are.
    kept = await profiles(host).UpdateMySettings(S.UpdateMySettingsRequest(), metadata=host.md)
    assert kept.settings == updated.settings
    await follow(host, friend)
    assert (await profile(friend, host)).challengeable and not (await profile(stranger, host)).challengeable
    stub = challenges_pb2_grpc.ChallengeServiceStub
    refused = await failure(
        stub(stranger.channel).CreateChallenge(
            challenges_pb2.CreateChallengeRequest(request_id="x", game="connect4", username=host.name),
            metadata=stranger.md,
        )
    )
    assert refused == (grpc.StatusCode.PERMISSION_DENIED, "CHALLENGE_NOT_ALLOWED")
    made = await stub(friend.channel).CreateChallenge(
        challenges_pb2.CreateChallengeRequest(request_id="y", game="connect4", username=host.name), metadata=friend.md
    )
    assert made.challenge.challenged.username == host.name
    await profiles(host).UpdateMySettings(
        S.UpdateMySettingsRequest(challenge_policy=S.CHALLENGE_POLICY_NOBODY), metadata=host.md
    )
    assert not (await profile(friend, host)).challengeable
    # A guest may turn chat off (kept with its session).
    visitor = await guest(address)
    await profiles(visitor).UpdateMySettings(S.UpdateMySettingsRequest(chat_enabled=False), metadata=visitor.md)
    got = (await profiles(visitor).GetMySettings(S.GetMySettingsRequest(), metadata=visitor.md)).settings
    assert not got.chat_enabled
