"""Deleting an account leaves nothing personal under any key: after a player has played a rated
game, been rated, blocked and muted and been blocked, reported and been reported, been warned and
sanctioned, and deleted their account, a scan of every key and every value of the Redis finds
neither their id nor their name — except the revocation of their sessions (SIGNED_OUT_PLAYERS,
the id alone), which must refuse their tokens until the last one expires (gateway/standing/
account_life.py). Their games stay, naming a placeholder; their opponent's rating stays; export
gives the whole account as JSON first."""

from __future__ import annotations

import asyncio
import json
import secrets

import grpc
from google.protobuf import duration_pb2
from tafel.admin.v1 import admin_pb2
from tafel.games.v1 import games_pb2
from tafel.play.v1 import (
    challenges_pb2,
    challenges_pb2_grpc,
    play_pb2,
    safety_pb2,
    social_pb2,
    social_pb2_grpc,
    tournaments_pb2,
    tournaments_pb2_grpc,
)

from kit.redis.keys import SIGNED_OUT_PLAYERS
from tests.gateway.conftest import GatewaySystem
from tests.gateway.harness import Seating, c4_move, failure
from tests.gateway.social.streams import Events
from tests.gateway.standing.helpers import PASSWORD, Person, register, sign_in
from tests.gateway.standing.test_moderation_e2e import staff
from tests.keyspace import sync_client


async def play_out(game_id: str, first: Person, second: Person) -> None:
    """Connect Four: the first player drops four in column 0 while the second fills column 1."""
    version = 0
    for turn in range(7):
        mover, column = (first, 0) if turn % 2 == 0 else (second, 1)
        response = await mover.games.SubmitMove(
            play_pb2.SubmitMoveRequest(
                game_id=game_id, expected_version=version, request_id=f"m{turn}", move=c4_move(column)
            ),
            metadata=mover.md,
            timeout=10,
        )
        version = response.status.version


def occurrences(redis_url: str, needles: list[bytes]) -> list[str]:
    """Every key whose name or value holds one of `needles` (case-insensitive), with where."""
    client = sync_client(redis_url)
    found: list[str] = []
    lowered = [n.lower() for n in needles]

    def check(key: bytes, where: str, blob: bytes) -> None:
        if any(n in blob.lower() for n in lowered):
            found.append(f"{key.decode(errors='replace')} {where}")

    for key in client.scan_iter(count=1000):
        check(key, "(name)", key)
        kind = client.type(key)
        if kind == b"string":
            check(key, "(value)", client.get(key) or b"")
        elif kind == b"hash":
            for field, value in client.hgetall(key).items():
                if key == SIGNED_OUT_PLAYERS.encode():
                    continue  # the sessions' revocation: kept until their tokens expire, by design
                check(key, f"field {field!r}", field + b" " + value)
        elif kind == b"set":
            for member in client.smembers(key):
                check(key, "(member)", member)
        elif kind == b"zset":
            for member in client.zrange(key, 0, -1):
                check(key, "(member)", member)
        elif kind == b"list":
            for item in client.lrange(key, 0, -1):
                check(key, "(item)", item)
        elif kind == b"stream":
            for entry_id, fields in client.xrange(key):
                check(key, f"entry {entry_id!r}", b" ".join(k + b" " + v for k, v in fields.items()))
    client.close()
    return found


async def test_deletion_leaves_nothing_personal(gw_system: GatewaySystem, seats: Seating) -> None:
    address = gw_system.gateways[0].address
    moderator = await staff(gw_system)
    leaver = await register(address, "leaver")
    other = await register(address, "other")
    pid, name = leaver.session.player.player_id, leaver.name
    # A display name too: kept with the account, in their seats and records.
    shown = f"Jörg Leaver {secrets.token_hex(3)}"
    leaver.session = (
        await leaver.accounts.SetDisplayName(play_pb2.SetDisplayNameRequest(display_name=shown), metadata=leaver.md)
    ).session

    game_id = await seats.directory.start_game(
        game="connect4",
        options=games_pb2.GameOptions(),
        players=[leaver.session.player, other.session.player],
        per_move_s=60.0,
        rated=True,
        origin="test",
    )
    await play_out(game_id, leaver, other)
    live_id = await seats.start([other.session.player, leaver.session.player])  # left running
    tstub = tournaments_pb2_grpc.TournamentServiceStub(leaver.channel)
    created = await tstub.CreateTournament(
        tournaments_pb2.CreateTournamentRequest(
            request_id="t1", name="Leaver's cup", game="connect4", format=tournaments_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN
        ),
        metadata=leaver.md,
        timeout=10,
    )
    await tstub.JoinTournament(
        tournaments_pb2.JoinTournamentRequest(tournament_id=created.tournament.tournament_id),
        metadata=other.md,
        timeout=10,
    )
    await tstub.JoinTournament(
        tournaments_pb2.JoinTournamentRequest(tournament_id=created.tournament.tournament_id),
        metadata=leaver.md,
        timeout=10,
    )
    # A director's action: the audit names the leaver as the director.
    await tstub.Announce(
        tournaments_pb2.AnnounceRequest(tournament_id=created.tournament.tournament_id, text="hi", request_id="a1"),
        metadata=leaver.md,
        timeout=10,
    )

    # Social: a challenge accepted (its game announced on both streams), a rematch offered after
    # that game, a pending open challenge; the other player's event stream names the leaver.
    challenges = challenges_pb2_grpc.ChallengeServiceStub(leaver.channel)
    made = await challenges.CreateChallenge(
        challenges_pb2.CreateChallengeRequest(request_id="ch1", username=other.name, game="connect4"),
        metadata=leaver.md,
    )
    accepted = await challenges_pb2_grpc.ChallengeServiceStub(other.channel).AcceptChallenge(
        challenges_pb2.AcceptChallengeRequest(challenge_id=made.challenge.challenge_id), metadata=other.md
    )
    await leaver.games.MakeOffer(
        play_pb2.MakeOfferRequest(game_id=game_id, kind=play_pb2.OFFER_KIND_REMATCH), metadata=leaver.md
    )
    await challenges.CreateChallenge(
        challenges_pb2.CreateChallengeRequest(request_id="ch2", open=True, game="connect4"), metadata=leaver.md
    )
    assert accepted.challenge.game_id

    # Chat: lines in the finished game's and the running game's players' channels (and the
    # other's line, which stays as it is).
    chat = social_pb2_grpc.ChatServiceStub(leaver.channel)
    for n, gid in enumerate((game_id, live_id)):
        channel = social_pb2.ChatChannel(kind=social_pb2.CHAT_CHANNEL_KIND_GAME_PLAYERS, id=gid)
        await chat.SendChatMessage(
            social_pb2.SendChatMessageRequest(request_id=f"c{n}", channel=channel, text=f"gg from {shown}"),
            metadata=leaver.md,
        )
    players_channel = social_pb2.ChatChannel(kind=social_pb2.CHAT_CHANNEL_KIND_GAME_PLAYERS, id=game_id)
    await social_pb2_grpc.ChatServiceStub(other.channel).SendChatMessage(
        social_pb2.SendChatMessageRequest(request_id="o1", channel=players_channel, text="thanks, gg"),
        metadata=other.md,
    )

    # People: follows both ways, settings, presence (the leaver's stream open, told to the other).
    people = social_pb2_grpc.FriendServiceStub(leaver.channel)
    await people.Follow(social_pb2.FollowRequest(username=other.name), metadata=leaver.md)
    await social_pb2_grpc.FriendServiceStub(other.channel).Follow(
        social_pb2.FollowRequest(username=name), metadata=other.md
    )
    await social_pb2_grpc.ProfileServiceStub(leaver.channel).UpdateMySettings(
        social_pb2.UpdateMySettingsRequest(chat_enabled=False, challenge_policy=social_pb2.CHALLENGE_POLICY_NOBODY),
        metadata=leaver.md,
    )
    other_events = await Events(other).started()
    leaver_events = await Events(leaver).started()
    await other_events.until(lambda: other_events.of("presence"))

    await leaver.safety.BlockPlayer(safety_pb2.BlockPlayerRequest(username=other.name), metadata=leaver.md)
    await leaver.safety.MutePlayer(safety_pb2.MutePlayerRequest(username=other.name), metadata=leaver.md)
    await other.safety.BlockPlayer(safety_pb2.BlockPlayerRequest(username=name), metadata=other.md)
    await other.safety.MutePlayer(safety_pb2.MutePlayerRequest(username=name), metadata=other.md)
    report = safety_pb2.ReportRequest(request_id="e1", reason=safety_pb2.REPORT_REASON_UNSPORTING, game_id=game_id)
    report.username = other.name
    await leaver.safety.Report(report, metadata=leaver.md)
    report.username = name
    await other.safety.Report(report, metadata=other.md)
    await moderator.moderation.WarnPlayer(
        admin_pb2.WarnPlayerRequest(username=name, message="be kind"), metadata=moderator.md
    )
    await moderator.moderation.SanctionPlayer(
        admin_pb2.SanctionPlayerRequest(
            username=name,
            kind=safety_pb2.SANCTION_KIND_CHAT_MUTE,
            duration=duration_pb2.Duration(seconds=3600),
            reason="rude",
        ),
        metadata=moderator.md,
    )

    exported = await leaver.accounts.ExportMyData(play_pb2.ExportMyDataRequest(), metadata=leaver.md)
    document = json.loads(exported.json)
    assert document["account"]["username"] == name and document["account"]["player_id"] == pid
    assert document["account"]["display_name"] == shown
    assert [g["game_id"] for g in document["games"]] == [game_id]
    assert document["blocked"] == [other.name] and document["muted"] == [other.name]
    assert len(document["reports_made"]) == 1 and document["reports_made"][0]["about"] == other.name
    assert document["reports_made"][0]["reason"] == "unsporting"
    assert [w["message"] for w in document["warnings"]] == ["be kind"]
    assert [s["kind"] for s in document["sanctions"]] == ["chat mute"]
    assert [r["leaderboard"] for r in document["ratings"]] == ["connect4"]
    assert [f["username"] for f in document["following"]] == [other.name]
    assert document["settings"] == {"chat_enabled": False, "challenge_policy": "nobody"}
    needles = [pid.encode(), name.encode(), shown.encode()]
    assert occurrences(gw_system.redis_url, needles), "the scan finds nothing at all"
    assert occurrences(gw_system.redis_url, [shown.encode()]), "the scan does not see the display name"

    code, reason = await failure(
        leaver.accounts.DeleteAccount(play_pb2.DeleteAccountRequest(password="not the password"), metadata=leaver.md)
    )
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "WRONG_PASSWORD")
    await leaver.accounts.DeleteAccount(play_pb2.DeleteAccountRequest(password=PASSWORD), metadata=leaver.md)

    await leaver_events.close()
    await other_events.close()
    await asyncio.sleep(0.2)  # the stream's end reaches its gateway's presence (which must write nothing)
    left = occurrences(gw_system.redis_url, needles)
    if left:
        client = sync_client(gw_system.redis_url)
        for where in left:
            key = where.split(" ")[0]
            if client.type(key) == b"hash":
                print(key, client.hgetall(key))
    assert left == [], "\n".join(left)
    # The games stay, naming a placeholder; the live one ended by forfeit; the name is free again.
    record = await other.games.GetGameRecord(play_pb2.GetGameRecordRequest(game_id=game_id), metadata=other.md)
    names = [seated.player.username for seated in record.record.players]
    assert names == ["deleted player", other.name]
    live = await other.games.GetGame(play_pb2.GetGameRequest(game_id=live_id), metadata=other.md)
    assert live.summary.status.over
    # The chat keeps its order: the leaver's line is there without name or words, the answer is not touched.
    kept = await social_pb2_grpc.ChatServiceStub(other.channel).ListChatMessages(
        social_pb2.ListChatMessagesRequest(channel=players_channel), metadata=other.md
    )
    assert [(m.author.username, m.text) for m in kept.messages] == [("deleted player", ""), (other.name, "thanks, gg")]
    code, reason = await failure(leaver.accounts.GetMe(play_pb2.GetMeRequest(), metadata=leaver.md))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "SESSION_REVOKED")
    code, reason = await failure(sign_in(leaver))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "BAD_CREDENTIALS")
    log = await moderator.moderation.ListAuditLog(admin_pb2.ListAuditLogRequest(), metadata=moderator.md)
    deleted = [e for e in log.entries if e.action == "delete_account"]
    assert deleted and deleted[0].subject.username == "deleted player"
