"""An account's whole life after sign-up: renamed by a moderator, exported by its owner, erased by
its owner.

Erasure keeps what the other players are owed (their finished games, their ratings, the audit log
of what staff did) and removes the person: every key under the player's id or name is deleted, the
games and reports they appear in name a placeholder instead (a fresh id per erasure, "deleted
player"), their ratings and bests leave the leaderboards, their blocks and mutes leave the others'
lists, and their audit alias no longer resolves to anyone. One thing stays for a while by design:
the revocation of their sessions (SIGNED_OUT_PLAYERS, the player id only) until the last token they
held has expired, after which every gateway forgets it (gateway/sessions.py). tests/gateway/standing/
test_erasure.py scans every key and value of a Redis for the person after an erasure.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

import grpc
from google.protobuf import json_format
from tafel.admin.v1 import admin_pb2
from tafel.play.v1 import challenges_pb2, play_pb2, safety_pb2, social_pb2

from gateway.auth import GUEST_PREFIX, USERNAME, Authenticator, Identity
from gateway.events.feed import contacts_key, events_key
from gateway.mail.mailer import Mailer
from gateway.notices.export import notices_export
from gateway.notices.inbox import Inbox
from gateway.notices.settings import NoticeSettingsStore
from gateway.people.store import PeopleStore
from gateway.ratings.book import RatingBook
from gateway.standing.consequences import Consequences
from gateway.standing.model import KIND_WORDS, iso
from gateway.standing.roles import ROLE_NAMES
from gateway.standing.roles import STAFF_ROLES as STAFF_ROLES_SET
from gateway.standing.store import DELETED_NAME, AccountRow, StandingStore, not_found, required_text
from gateway.stream_rewrite import replace_player_in_stream
from gateway.tournaments.store import TournamentStore
from kit.errors import Refused, invalid
from kit.proto_players import replace_player
from kit.redis.keys import (
    AUDIT_NAMES,
    CHALLENGES_DUE,
    CHALLENGES_OPEN,
    SANCTIONS,
    STAFF_ROLES,
    account_key,
    challenge_key,
    chat_written_key,
    failures_key,
    known_sources_key,
    meta_key,
    offers_key,
    offers_log_key,
    player_games_key,
    player_key,
    record_key,
    records_index_key,
    report_key,
)
from kit.redis.layer import RedisLayer
from kit.redis.replies import pairs, text
from kit.redis.scripts import script

PLAYER_PARTS = (
    "events",
    "contacts",
    "challenges",
    "challenge-log",
    "blocks",
    "blocked-by",
    "mutes",
    "muted-by",
    "warnings",
    "sanctions",
    "reports-made",
    "reports-about",
    "presence",
    "chat-written",
    "chat-rate",
)
EXPORT_GAMES = 10_000  # the most finished games an export lists


def _json(message: Any) -> Any:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


class AccountLife:
    def __init__(
        self,
        redis: RedisLayer,
        auth: Authenticator,
        store: StandingStore,
        consequences: Consequences,
        book: RatingBook,
        tournaments: TournamentStore,
        people: PeopleStore | None = None,
        mail: Mailer | None = None,
        inbox: Inbox | None = None,
        notice_settings: NoticeSettingsStore | None = None,
    ) -> None:
        self.redis = redis
        self.auth = auth
        self.store = store
        self.consequences = consequences
        self.book = book
        self.tournaments = tournaments
        self.people = people  # follows and settings (gateway/people); None: a platform without them
        self.mail = mail  # the e-mail address (gateway/mail); None: a platform without it
        self.inbox = inbox  # notices (gateway/notices); None: a platform without them
        self.notice_settings = notice_settings

    # -- where a player appears under their id ----------------------------------------------------

    async def _game_ids(self, player_id: str) -> list[str]:
        """Every game the player is known in: finished (records) and live or recent (meta)."""
        replies: Any = await self.redis.many(
            [
                ("ZRANGE", records_index_key(player_id), 0, -1),
                ("ZRANGE", player_games_key(player_id, "live"), 0, -1),
                ("ZRANGE", player_games_key(player_id, "done"), 0, -1),
            ]
        )
        return sorted({text(g) for reply in replies for g in reply})

    async def _replace_in_games(self, player_id: str, new: play_pb2.Player) -> None:
        """Every record and live game metadata naming the player names `new` instead."""
        for game_id in await self._game_ids(player_id):
            raw, players = await self.redis.many([("GET", record_key(game_id)), ("HGET", meta_key(game_id), "p")])
            if raw is not None:
                record = play_pb2.GameRecord.FromString(raw)
                replace_player(record, player_id, new)
                await self.redis.call("SET", record_key(game_id), record.SerializeToString(), "XX", "KEEPTTL")
            await self._replace_in_offers(game_id, player_id, new)
            if players is not None:
                seats = [
                    [new.player_id, new.username, seat[2]] if seat[0] == player_id else seat
                    for seat in json.loads(players)
                ]
                await self.redis.call("HSET", meta_key(game_id), "p", json.dumps(seats))

    async def _replace_in_offers(self, game_id: str, player_id: str, new: play_pb2.Player) -> None:
        """The game's offers (pending and logged) name `new` instead."""
        pending, logged = await self.redis.many(
            [("HGETALL", offers_key(game_id)), ("LRANGE", offers_log_key(game_id), 0, -1)]
        )
        commands: list[Any] = []
        for field, raw in pairs(pending).items():
            if field.endswith((b":s", b":r")):
                continue
            offer = play_pb2.Offer.FromString(raw)
            if replace_player(offer, player_id, new):
                commands.append(("HSET", offers_key(game_id), field, offer.SerializeToString()))
        offers = [play_pb2.Offer.FromString(raw) for raw in logged]
        replaced = [replace_player(offer, player_id, new) for offer in offers]  # every one, no short cut
        if any(replaced):
            commands += [
                ("DEL", offers_log_key(game_id)),
                ("RPUSH", offers_log_key(game_id), *[o.SerializeToString() for o in offers]),
            ]
        await self.redis.many(commands)

    async def _replace_in_social(self, player_id: str, new: play_pb2.Player) -> None:
        """Others' event streams that name the player, and the challenges it was in (deleted: a
        challenge is between two people and means nothing without one of them)."""
        contacts, challenges = await self.redis.many(
            [("SMEMBERS", contacts_key(player_id)), ("SMEMBERS", player_key(player_id, "challenge-log"))]
        )
        for other in contacts:
            other_id = text(other)
            await replace_player_in_stream(
                self.redis, events_key(other_id), challenges_pb2.AccountEvent, player_id, new
            )
        commands: list[Any] = [("SREM", contacts_key(text(o)), player_id) for o in contacts]
        for cid in challenges:
            commands += [
                ("DEL", challenge_key(text(cid))),
                ("ZREM", CHALLENGES_OPEN, cid),
                ("ZREM", CHALLENGES_DUE, cid),
            ]
        await self.redis.many(commands)

    async def _replace_in_chat(self, player_id: str, new: play_pb2.Player, *, erase: bool = False) -> None:
        """The lines the player wrote, in every channel still kept. An erased author's lines keep
        their place (the others' answers still read in order) but lose their words too."""

        def forget(line: Any) -> None:
            line.text = ""

        for channel_key in await self.redis.call("SMEMBERS", chat_written_key(player_id)):
            await replace_player_in_stream(
                self.redis,
                text(channel_key),
                social_pb2.ChatMessage,
                player_id,
                new,
                field=b"m",
                also=forget if erase else None,
            )

    async def _replace_in_reports(self, player_id: str, new: play_pb2.Player) -> None:
        made, about = await self.redis.many(
            [
                ("ZRANGE", player_key(player_id, "reports-made"), 0, -1),
                ("ZRANGE", player_key(player_id, "reports-about"), 0, -1),
            ]
        )
        for report_id in {text(r) for r in (*made, *about)}:
            raw = await self.redis.call("GET", report_key(report_id))
            if raw is None:
                continue
            report = admin_pb2.Report.FromString(raw)
            replace_player(report, player_id, new)
            await self.redis.call("SET", report_key(report_id), report.SerializeToString(), "XX")

    async def _renamed_in_lists(self, player_id: str, username: str) -> None:
        """The name beside the player's id in others' block and mute lists."""
        by_block, by_mute = await self.redis.many(
            [("SMEMBERS", player_key(player_id, "blocked-by")), ("SMEMBERS", player_key(player_id, "muted-by"))]
        )
        commands: list[Any] = [("HSET", player_key(text(o), "blocks"), player_id, username) for o in by_block]
        commands += [("HSET", player_key(text(o), "mutes"), player_id, username) for o in by_mute]
        await self.redis.many(commands)

    # -- rename (moderators) ------------------------------------------------------------------------

    async def rename(self, actor: AccountRow, username: str, new_username: str, reason: str) -> play_pb2.Player:
        reason = required_text(reason, "a reason")
        if not USERNAME.match(new_username) or new_username.lower().startswith(GUEST_PREFIX):
            raise invalid("BAD_USERNAME", "a username is 3-24 characters of A-Z a-z 0-9 _ -", field="new_username")
        row = await self.store.require(username)
        flat = pairs(await self.redis.call("HGETALL", account_key(row.username)))
        fields = [part for key, value in flat.items() if key not in (b"id", b"name") for part in (key, value)]
        claimed = await self.redis.run(
            script("auth/claim_name"), [account_key(new_username)], [row.player_id, new_username, *fields]
        )
        if not int(claimed):
            raise Refused(grpc.StatusCode.ALREADY_EXISTS, "USERNAME_TAKEN", f"the username {new_username} is taken")
        # The display name goes too (renamed records and tokens show the new login name): a name
        # a moderator renames is rarely offensive alone. Renaming to the same login name resets
        # only the display name.
        await self.redis.call("HDEL", account_key(new_username), "dn")
        renamed = play_pb2.Player(player_id=row.player_id, username=new_username)
        if row.username.lower() != new_username.lower():
            await self.redis.run(script("auth/drop"), [account_key(row.username)], [row.player_id])
            await self.redis.many([("DEL", failures_key(row.username)), ("DEL", known_sources_key(row.username))])
        # Tokens carry the name: the account signs in again under the new one.
        await self.auth.revocations.revoke_player(row.player_id, int(time.time() * 1000) + 1)
        await self._replace_in_games(row.player_id, renamed)
        await self._replace_in_reports(row.player_id, renamed)
        await self._replace_in_chat(row.player_id, renamed)
        await self._renamed_in_lists(row.player_id, new_username)
        await self.book.rename(row.player_id, new_username)
        if self.people is not None:
            await self.people.renamed(row.player_id, new_username)
        if self.inbox is not None:
            await self.inbox.replace_player(row.player_id, renamed)
        role = await self.store.role_of(row.player_id)
        commands: list[Any] = [
            ("HSET", AUDIT_NAMES, row.alias, json.dumps({"id": row.player_id, "name": new_username}))
        ]
        if role in STAFF_ROLES_SET:
            commands.append(("HSET", STAFF_ROLES, row.player_id, f"{ROLE_NAMES[role]}|{new_username}"))
        await self.redis.many(commands)
        new_row = AccountRow(row.player_id, new_username, row.joined_ms, row.alias)
        await self.store.audit(actor, "rename", new_row, reason, {"from": row.username, "to": new_username})
        return renamed

    # -- export (the owner) -------------------------------------------------------------------------

    async def export(self, identity: Identity) -> str:
        if identity.guest:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION, "GUEST_ACCOUNT", "a guest has no account to export; register"
            )
        row = await self.store.account(identity.username)
        if row is None or row.player_id != identity.player_id:
            raise not_found(identity.username)
        pid = row.player_id
        game_ids: Any = await self.redis.call("ZREVRANGE", records_index_key(pid), 0, EXPORT_GAMES - 1)
        records: list[Any] = []
        for start in range(0, len(game_ids), 500):
            chunk = game_ids[start : start + 500]
            # One GET each in one round trip: every record is in its own slot on a cluster.
            raw: Any = await self.redis.many([("GET", record_key(text(g))) for g in chunk])
            records.extend(_json(play_pb2.GameRecord.FromString(r)) for r in raw if r is not None)
        blocked, muted = await self.store.blocked_and_muted(pid)
        made: Any = await self.redis.call("ZRANGE", player_key(pid, "reports-made"), 0, -1)
        reports = []
        for report_id in made:
            raw_report = await self.redis.call("GET", report_key(text(report_id)))
            if raw_report is not None:
                report = admin_pb2.Report.FromString(raw_report)
                reports.append(
                    {
                        "report_id": report.report_id,
                        "about": report.reported.username,
                        "game_id": report.game_id,
                        "reason": safety_pb2.ReportReason.Name(report.reason).removeprefix("REPORT_REASON_").lower(),
                        "details": report.details,
                        "created_at": iso(report.created_at.ToMilliseconds()),
                        "status": "resolved" if report.status == admin_pb2.REPORT_STATUS_RESOLVED else "open",
                    }
                )
        ratings = [
            {"leaderboard": pool, "rating": stored.rating.rating, "deviation": stored.rating.rd, "rank": rank}
            for pool, stored, rank in await self.book.ratings_of(pid)
        ]
        display_name = text(await self.redis.call("HGET", account_key(row.username), "dn") or b"")
        people: dict[str, Any] = {}
        if self.people is not None:
            chat, policy = await self.people.settings(pid)
            policy_name = social_pb2.ChallengePolicy.Name(policy)  # type: ignore[arg-type]
            people = {
                "following": [
                    {"username": f.username, "since": iso(f.at_ms)} for f in await self.people.following(pid)
                ],
                "settings": {
                    "chat_enabled": chat,
                    "challenge_policy": policy_name.removeprefix("CHALLENGE_POLICY_").lower(),
                },
            }
        notices: dict[str, Any] = {}
        if self.inbox is not None and self.notice_settings is not None:
            notices = {"notifications": await notices_export(self.inbox, self.notice_settings, pid)}
        document = {
            "format": "tafel-export-1",
            "exported_at": iso(int(time.time() * 1000)),
            "account": {
                "player_id": pid,
                "username": row.username,
                "display_name": display_name or None,
                "joined_at": iso(row.joined_ms) if row.joined_ms else None,
                "role": ROLE_NAMES.get(await self.store.role_of(pid), "player"),
            },
            "ratings": ratings,
            "games": records,
            "blocked": [p.username for p in blocked],
            "muted": [p.username for p in muted],
            **people,
            **notices,
            **({"email": await self.mail.export(pid)} if self.mail is not None else {}),
            "reports_made": reports,
            "warnings": [{"message": w.message, "at": iso(w.at_ms)} for w in await self.store.warnings(pid)],
            "sanctions": [
                {
                    "kind": KIND_WORDS.get(s.kind, "sanction"),
                    "reason": s.reason,
                    "from": iso(s.starts_ms),
                    "until": iso(s.ends_ms) if s.ends_ms else None,
                    "lifted_at": iso(s.lifted_ms) if s.lifted_ms else None,
                }
                for s in await self.store.sanction_history(pid)
            ],
        }
        return json.dumps(document, ensure_ascii=False, indent=1)

    # -- erasure (the owner) ------------------------------------------------------------------------

    async def delete(self, identity: Identity, password: str) -> None:
        await self.auth.check_password(identity, password)
        row = await self.store.require(identity.username)
        pid = row.player_id
        # First: no session of theirs acts while the rest is erased.
        await self.auth.revocations.revoke_player(pid, int(time.time() * 1000) + 1)
        await self.consequences.remove_from_play(identity.player(), "d")
        placeholder = play_pb2.Player(player_id=f"deleted-{secrets.token_hex(6)}", username=DELETED_NAME)
        await self._replace_in_games(pid, placeholder)
        await self._replace_in_reports(pid, placeholder)
        await self._replace_in_social(pid, placeholder)
        await self._replace_in_chat(pid, placeholder, erase=True)
        if self.inbox is not None:  # others' notices that name them, then their own inbox
            await self.inbox.replace_player(pid, placeholder, erase=True)
            await self.inbox.erase(pid)
        if self.notice_settings is not None:
            await self.notice_settings.erase(pid)
        await self.tournaments.replace_player(pid, placeholder.player_id, placeholder.username)
        await self.book.erase(pid)
        if self.people is not None:
            await self.people.erase(pid)
        if self.mail is not None:
            await self.mail.erase(pid)
        blocks, blocked_by, mutes, muted_by = await self.redis.many(
            [
                ("HKEYS", player_key(pid, "blocks")),
                ("SMEMBERS", player_key(pid, "blocked-by")),
                ("HKEYS", player_key(pid, "mutes")),
                ("SMEMBERS", player_key(pid, "muted-by")),
            ]
        )
        commands: list[Any] = [("SREM", player_key(text(o), "blocked-by"), pid) for o in blocks]
        commands += [("HDEL", player_key(text(o), "blocks"), pid) for o in blocked_by]
        commands += [("SREM", player_key(text(o), "muted-by"), pid) for o in mutes]
        commands += [("HDEL", player_key(text(o), "mutes"), pid) for o in muted_by]
        game_names = {key.rsplit(":g:", 1)[1] for key in await self._index_keys(pid)}
        commands += [("DEL", records_index_key(pid, game)) for game in game_names]
        commands += [
            ("DEL", records_index_key(pid)),
            ("DEL", player_games_key(pid, "live")),
            ("DEL", player_games_key(pid, "done")),
            *[("DEL", player_key(pid, part)) for part in PLAYER_PARTS],
            ("HDEL", STAFF_ROLES, pid),
            ("HDEL", SANCTIONS, pid),
            ("HDEL", AUDIT_NAMES, row.alias),
            ("DEL", failures_key(row.username)),
            ("DEL", known_sources_key(row.username)),
        ]
        await self.redis.many(commands)
        await self.redis.run(script("auth/drop"), [account_key(row.username)], [pid])
        # The entry names the account by its alias, which now resolves to no one.
        await self.store.audit(None, "delete_account", row, "deleted by its owner", erased=True)
        await self.store.changed(pid)

    async def _index_keys(self, player_id: str) -> list[str]:
        """The player's per-game record indexes (records_index_key(player, game))."""
        games = await self.book.pools.listed()
        names = sorted({pool.game for pool in games})
        found: Any = await self.redis.many([("EXISTS", records_index_key(player_id, g)) for g in names])
        return [records_index_key(player_id, g) for g, hit in zip(names, found, strict=True) if int(hit)]
