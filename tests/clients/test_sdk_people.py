"""The SDK's chat, following, presence, profiles and settings through the whole
platform: a game's chat watched through a connection cut mid-way and resumed after the last line
with nothing lost or doubled, a line whose answer was lost resent with its request id and said
once, the channels kept apart; a followed player's presence (online, playing which game, online
again) on the follower's event stream, in the list and on the profile with the result against
the follower; settings that turn chat off and challenges from everyone away."""

from __future__ import annotations

import uuid

import grpc
import pytest
from tafel.chat import channel
from tafel.client import TafelClient
from tafel.conformance.proxy import Cut, Policy, Proxy, cut_status
from tafel.errors import IllegalMove, PermissionDenied, TafelError
from tafel.events import AccountEventStream, presence_of
from tafel.play.v1 import challenges_pb2 as C
from tafel.play.v1 import social_pb2 as S

from tools.platform import Platform

WATCH = "/tafel.play.v1.ChatService/WatchChat"
SEND = "/tafel.play.v1.ChatService/SendChatMessage"


async def account(address: str, prefix: str) -> TafelClient:
    client = await TafelClient.connect(address)
    await client.register(f"{prefix}{uuid.uuid4().hex[:8]}", "correct horse battery")
    return client


class Cutting(Policy):
    """Cuts the chat watch (UNAVAILABLE) at its `at`-th response (ready included), once, and
    loses the answer of the first SendChatMessage once the gateway has acted on it."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.seen = 0
        self.sends = 0

    def response(self, method: str, raw: bytes) -> Cut | None:
        if method == WATCH:
            self.seen += 1
            if self.seen == self.at:
                return Cut(cut_status(grpc.StatusCode.UNAVAILABLE, "cut by the test"))
        if method == SEND:
            self.sends += 1
            if self.sends == 1:
                return Cut(cut_status(grpc.StatusCode.UNAVAILABLE, "answer lost by the test"))
        return None


async def game_between(first: TafelClient, second: TafelClient) -> str:
    """A casual Connect Four game, `first` moving first (a challenge accepted)."""
    made = await first.create_challenge("connect4", username=second.player.username, seat="first", per_move_s=60)
    return str((await second.accept_challenge(made.challenge_id)).game_id)


async def until_presence(
    events: AccountEventStream, username: str, state: int, timeout_s: float = 15.0
) -> S.PresenceChanged:
    while True:
        changed = presence_of(await events.next_event(timeout_s))
        if changed is not None and changed.player.username == username and changed.presence.state == state:
            return changed


async def test_game_chat_resumes_after_a_cut_and_a_resent_line_is_said_once(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    ann, ben = await account(address, "ann"), await account(address, "ben")
    policy = Cutting(at=3)  # ready, the first line, (cut): the second line comes after the resume
    proxy = await Proxy(address, policy).start()
    ann_via_proxy = await TafelClient.connect(proxy.address)
    ann_via_proxy.session = ann.session
    try:
        game_id = await game_between(ann, ben)
        players = channel("players", game_id)
        said = [await ben.send_chat(players, "good luck")]
        async with ann_via_proxy.chat_stream(players) as chat:
            assert chat.ready.can_write and not chat.ready.chat_off
            assert chat.ready.last_message_id == said[0].message_id
            seen = [await chat.next_message(10)]  # the history: ben's line
            for text in ("you too?", "your move"):
                said.append(await ben.send_chat(players, text))
            seen += [await chat.next_message(10) for _ in range(2)]
            # Said through the proxy, whose answer is lost: resent with the same request id, it
            # is said once and answered with the first message.
            mine = await ann_via_proxy.send_chat(players, "  thanks\nben  ")
            assert policy.sends == 2 and mine.text == "thanks ben"
            seen.append(await chat.next_message(10))
            assert chat.resumed_from == [said[0].message_id], "the cut was not resumed after the last line seen"
        assert [m.message_id for m in seen] == [m.message_id for m in said] + [mine.message_id]
        assert [m.author.username for m in seen] == [ben.player.username] * 3 + [ann.player.username]
        assert [m.text for m in (await ann.list_chat(players)).messages] == [
            "good luck",
            "you too?",
            "your move",
            "thanks ben",
        ]
        # After an id: only what follows it.
        later = await ben.list_chat(players, said[1].message_id)
        assert [m.message_id for m in later.messages] == [said[2].message_id, mine.message_id]

        # The same request id by hand: the first message again, not a second line.
        first = await ben.send_chat(players, "gg", request_id="ben-gg-1")
        assert (await ben.send_chat(players, "gg", request_id="ben-gg-1")).message_id == first.message_id
        assert len((await ann.list_chat(players)).messages) == 5

        # The channels are kept apart: a player does not write among the spectators, and a
        # stranger watching reads the spectators' channel, not the players'.
        with pytest.raises(PermissionDenied) as refused:
            await ann.send_chat(channel("spectators", game_id), "psst")
        assert refused.value.reason == "CHAT_NOT_ALLOWED"
        cleo = await account(address, "cleo")
        try:
            with pytest.raises(TafelError) as hidden:
                await cleo.list_chat(players)
            assert hidden.value.reason == "CHAT_CHANNEL_NOT_FOUND"
            watched = await cleo.send_chat(channel("spectators", game_id), "nice opening")
            assert [m.message_id for m in (await cleo.list_chat(channel("spectators", game_id))).messages] == [
                watched.message_id
            ]
            assert len((await ann.list_chat(players)).messages) == 5
        finally:
            await cleo.close()
    finally:
        await proxy.stop()
        for client in (ann, ben, ann_via_proxy):
            await client.close()


async def test_presence_of_a_followed_player_profile_and_settings(platform: Platform) -> None:
    address = platform.gateway_addresses[0]
    dora, eli = await account(address, "dora"), await account(address, "eli")
    guest = await TafelClient.connect(address)
    await guest.sign_in_as_guest()
    try:
        with pytest.raises(IllegalMove) as refused:
            await guest.follow(eli.player.username)
        assert refused.value.reason == "FOLLOW_NEEDS_ACCOUNT"

        async with dora.event_stream() as events:
            followed = await dora.follow(eli.player.username)
            assert followed.player.username == eli.player.username
            assert followed.presence.state != S.PRESENCE_STATE_ONLINE, followed  # no stream of eli's open yet
            assert (await dora.follow(eli.player.username)).player.player_id == followed.player.player_id

            async with eli.event_stream():
                await until_presence(events, eli.player.username, S.PRESENCE_STATE_ONLINE)
                game_id = await game_between(dora, eli)
                playing = await until_presence(events, eli.player.username, S.PRESENCE_STATE_PLAYING)
                assert playing.presence.game_id == game_id and playing.presence.game == "connect4"
                [listed] = await dora.list_following()
                assert listed.presence.state == S.PRESENCE_STATE_PLAYING and listed.presence.game_id == game_id
                await eli.resign(game_id)
                await until_presence(events, eli.player.username, S.PRESENCE_STATE_ONLINE)
            gone = await until_presence(events, eli.player.username, S.PRESENCE_STATE_OFFLINE)
            assert gone.presence.HasField("last_seen")

        page = await dora.get_profile(eli.player.username)
        assert page.player.username == eli.player.username and page.HasField("joined_at")
        assert page.followed_by_you and not page.follows_you and page.followers == 1
        assert [g.game_id for g in page.recent_games] == [game_id]
        assert page.recent_games[0].result == S.GAME_RESULT_LOSS  # eli resigned
        assert (page.against_you.wins, page.against_you.losses, page.against_you.draws) == (1, 0, 0)

        # Settings: chat off (a line is refused CHAT_OFF), challenges from nobody.
        assert (await eli.get_settings()).chat_enabled
        now = await eli.update_settings(chat_enabled=False, challenge_policy="nobody")
        assert not now.chat_enabled and now.challenge_policy == S.CHALLENGE_POLICY_NOBODY
        assert (await eli.update_settings(chat_enabled=False)).challenge_policy == S.CHALLENGE_POLICY_NOBODY
        with pytest.raises(IllegalMove) as off:
            await eli.send_chat(channel("players", game_id), "hello?")
        assert off.value.reason == "CHAT_OFF"
        with pytest.raises(TafelError) as barred:
            await dora.create_challenge("connect4", username=eli.player.username)
        assert barred.value.reason == "CHALLENGE_NOT_ALLOWED"
        assert not (await dora.get_profile(eli.player.username)).challengeable

        await dora.unfollow(eli.player.username)
        assert await dora.list_following() == []
    finally:
        for client in (dora, eli, guest):
            await client.close()


def test_chat_and_following_calls_are_retried() -> None:
    """Each is safe to resend: a line carries a request id, following and settings set a state."""
    from tafel.retry import retried_methods

    names = {(n["service"].rsplit(".", 1)[-1], n["method"]) for n in retried_methods()}
    assert {
        ("ChatService", "SendChatMessage"),
        ("FriendService", "Follow"),
        ("FriendService", "Unfollow"),
        ("ProfileService", "UpdateMySettings"),
    } <= names
    assert C.AccountEvent.DESCRIPTOR.fields_by_name["presence"].message_type.name == "PresenceChanged"
