"""The scenarios of meeting at the board: a challenge accepted and one declined, a
rematch, a draw offer answered, and the account's event stream resumed after a cut. The client
runs with --events (docs/clients.md): it follows its account's event stream and answers what comes.
The runner is a registered account (a challenge names a player by username) that challenges the
client, plays the other seat with a level-1 bot and makes or answers the offers. And of knowing
each other: a line each way in a game's chat, the client's watch cut and resumed after
the last line it printed (--chat), and the presence of a player the client follows, on its event
stream (--events --follow). Registered in SCENARIOS by catalog.py."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc

from tafel import chat
from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient
from tafel.conformance.proxy import Cut, Proxy
from tafel.conformance.scenarios import Failed, Launched, Settings, TableRun, finish, launch, played_legally
from tafel.conformance.traffic import Traffic, refusal_status
from tafel.events import AccountEventStream
from tafel.play.v1 import challenges_pb2, play_pb2

C = challenges_pb2
ANSWER_S = 10.0  # how long the runner waits for the client to answer a challenge or an offer
POLLS = 2  # ListChallenges calls allowed (once at the start is fine; a loop of them is polling)


async def registered(settings: Settings) -> TafelClient:
    client = await TafelClient.connect(settings.gateway)
    await client.register(f"conf-{secrets.token_hex(6)}", secrets.token_urlsafe(18))
    return client


@dataclass
class Meeting:
    settings: Settings
    traffic: Traffic
    runner: TafelClient
    events: AccountEventStream  # the runner's own
    client_name: str
    client_id: str
    client_token: str
    launched: Launched

    async def next_matching(
        self, test: Callable[[C.AccountEvent], bool], missing: str, timeout_s: float = ANSWER_S
    ) -> C.AccountEvent:
        """The runner's next event that passes `test`; Failed(`missing`) when none comes in time."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            try:
                event = await self.events.next_event(max(0.01, deadline - loop.time()))
            except TimeoutError:
                raise Failed(missing) from None
            if test(event):
                return event

    async def answer_to(self, challenge: C.Challenge) -> C.Challenge:
        """The challenge once the client has answered it (as the runner's event stream says)."""
        cid = challenge.challenge_id
        event = await self.next_matching(
            lambda e: e.challenge.challenge_id == cid and e.challenge.status != C.CHALLENGE_STATUS_PENDING,
            f"the client did not answer the challenge within {ANSWER_S:.0f} s (did it follow its event stream?)",
        )
        return event.challenge

    async def challenge(self, **fields: Any) -> C.Challenge:
        return await self.runner.create_challenge("connect4", username=self.client_name, per_move_s=30, **fields)

    async def play_runner_seat(self, game_id: str) -> None:
        game = await self.runner.wait_for_game(game_id)
        await play_game(self.runner, game_id, game.seat, strategy_for("connect4", 1), timeout_s=self.settings.timeout_s)

    async def exited(self, timeout_s: float | None = None) -> None:
        code = await finish(self.launched, timeout_s or self.settings.timeout_s)
        if code != 0:
            raise Failed(f"the client exited with {code}: {self.launched.stderr.strip()[-300:]}")

    async def run_of(self, game_id: str) -> TableRun:
        record = await self.runner.get_record(game_id)
        seats = [p.seat for p in record.players if p.player.player_id == self.client_id]
        return TableRun(game_id, record, [self.launched], seats)

    def no_polling(self) -> None:
        if self.traffic.calls["ListChallenges"] > POLLS:
            raise Failed(
                f"the client called ListChallenges {self.traffic.calls['ListChallenges']} times: "
                "follow the event stream instead of polling"
            )


@contextlib.asynccontextmanager
async def meeting(settings: Settings, traffic: Traffic, *client_args: str) -> AsyncIterator[Meeting]:
    """The runner and the client's accounts, the client launched with --events through the proxy
    and its event stream live (its `ready` passed the proxy), the runner's stream open."""
    runner = await registered(settings)
    account = await registered(settings)
    proxy = await Proxy(settings.gateway, traffic).start()
    traffic.proxy = proxy
    launched: Launched | None = None
    assert account.session is not None
    try:
        async with runner.event_stream() as events:
            launched = await launch(
                settings, proxy, account.session.token, account.player.player_id, "connect4", "--events", *client_args
            )
            await live(traffic, launched, settings.timeout_s)
            yield Meeting(
                settings, traffic, runner, events, account.player.username, account.player.player_id,
                account.session.token, launched,
            )  # fmt: skip
    finally:
        if launched is not None and launched.process.returncode is None:
            launched.process.kill()
            await launched.process.wait()
        await proxy.stop()
        await runner.close()
        await account.close()


async def live(
    traffic: Traffic,
    launched: Launched,
    timeout_s: float,
    ready: asyncio.Event | None = None,
    what: str = "opening its event stream",
    method: str = "EventService.WatchMyEvents",
) -> None:
    """Until `ready` (default: the client's event stream is live); Failed when the client exits
    first or it does not happen in time."""
    opened = asyncio.ensure_future((ready or traffic.events_live).wait())
    exited = asyncio.ensure_future(launched.process.wait())
    try:
        done, _ = await asyncio.wait((opened, exited), timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        if opened in done:
            return
        if exited in done:
            assert launched.process.stderr is not None
            said = (await launched.process.stderr.read()).decode().strip()[-400:]
            raise Failed(f"the client exited with {exited.result()} before {what}: {said}")
        raise Failed(f"the client did not get to {what} ({method}) within {timeout_s:.0f} s")
    finally:
        opened.cancel()
        exited.cancel()


def status_word(status: int) -> str:
    return C.ChallengeStatus.Name(status).removeprefix("CHALLENGE_STATUS_").lower()  # type: ignore[arg-type]


async def challenge_accepted(settings: Settings) -> dict[str, Any]:
    traffic = Traffic()
    async with meeting(settings, traffic) as met:
        answer = await met.answer_to(await met.challenge())
        if answer.status != C.CHALLENGE_STATUS_ACCEPTED:
            raise Failed(f"the challenge was {status_word(answer.status)}, not accepted")
        await asyncio.gather(met.play_runner_seat(answer.game_id), met.exited())
        details = played_legally(await met.run_of(answer.game_id), traffic)
        met.no_polling()
        return details


async def challenge_declined(settings: Settings) -> dict[str, Any]:
    traffic = Traffic()
    async with meeting(settings, traffic, "--decline", "too_slow") as met:
        answer = await met.answer_to(await met.challenge())
        if answer.status != C.CHALLENGE_STATUS_DECLINED:
            raise Failed(f"the challenge was {status_word(answer.status)}, not declined")
        if answer.decline_reason != C.DECLINE_REASON_TOO_SLOW:
            raise Failed(f"declined with {C.DeclineReason.Name(answer.decline_reason)}, not DECLINE_REASON_TOO_SLOW")
        await met.exited()
        met.no_polling()
        return {"challenge_id": answer.challenge_id, "reason": C.DeclineReason.Name(answer.decline_reason)}


async def rematch(settings: Settings) -> dict[str, Any]:
    traffic = Traffic()
    async with meeting(settings, traffic, "--rematch", "--count", "2") as met:
        answer = await met.answer_to(await met.challenge())
        if answer.status != C.CHALLENGE_STATUS_ACCEPTED:
            raise Failed(f"the challenge was {status_word(answer.status)}, not accepted")
        first = answer.game_id
        await met.play_runner_seat(first)
        offered = await met.next_matching(
            lambda e: e.offer.game_id == first and e.offer.kind == play_pb2.OFFER_KIND_REMATCH
            and e.offer.status == play_pb2.OFFER_STATUS_PENDING,
            f"the client offered no rematch within {ANSWER_S:.0f} s of the game's end",
        )  # fmt: skip
        if offered.offer.by.player.player_id != met.client_id:
            raise Failed("the rematch offer is not the client's")
        accepted = await met.runner.answer_offer(first, "rematch", True)
        if not accepted.new_game_id:
            raise Failed(f"the rematch did not start (the offer is {play_pb2.OfferStatus.Name(accepted.status)})")
        await asyncio.gather(met.play_runner_seat(accepted.new_game_id), met.exited())
        details = played_legally(await met.run_of(accepted.new_game_id), traffic)
        details["first_game_id"] = first
        return details


async def draw_offer_answered(settings: Settings) -> dict[str, Any]:
    traffic = Traffic()
    async with meeting(settings, traffic, "--draw", "accept") as met:
        # The runner moves first and offers before its first move: the client, not to move, can
        # only answer (a move would make the offer moot).
        answer = await met.answer_to(await met.challenge(seat="first"))
        if answer.status != C.CHALLENGE_STATUS_ACCEPTED:
            raise Failed(f"the challenge was {status_word(answer.status)}, not accepted")
        await met.runner.wait_for_game(answer.game_id)
        await met.runner.make_offer(answer.game_id, "draw")
        settled = await met.next_matching(
            lambda e: e.offer.game_id == answer.game_id and e.offer.kind == play_pb2.OFFER_KIND_DRAW
            and e.offer.status != play_pb2.OFFER_STATUS_PENDING,
            f"the client did not answer the draw offer within {ANSWER_S:.0f} s",
        )  # fmt: skip
        if settled.offer.status != play_pb2.OFFER_STATUS_ACCEPTED:
            raise Failed(f"the draw offer ended {play_pb2.OfferStatus.Name(settled.offer.status)}, not accepted")
        await met.exited()
        record = await met.runner.get_record(answer.game_id)
        if record.outcome.reason != "DRAW_AGREED":
            raise Failed(f"the game ended {record.outcome.reason or 'without an outcome'}, not DRAW_AGREED")
        return {"game_id": answer.game_id, "offers": [play_pb2.OfferStatus.Name(o.status) for o in record.offers]}


class CuttingTheEvents(Traffic):
    """The client's event stream is cut (UNAVAILABLE) at its fourth event, which is not delivered."""

    def __init__(self) -> None:
        super().__init__()
        self.cut = False
        self.first_ready = ""

    def response(self, method: str, raw: bytes) -> Cut | None:
        if not self.events_live.is_set() and method.endswith("/WatchMyEvents"):
            ready = C.WatchMyEventsResponse.FromString(raw)
            if ready.WhichOneof("kind") == "ready":
                self.first_ready = ready.ready.last_event_id or "0-0"
        return super().response(method, raw)

    def on_account_event(self) -> Cut | None:
        if self.account_events == 4 and not self.cut:
            self.cut = True
            self.account_events -= 1
            return Cut(refusal_status(grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE", "cut by the conformance runner"))
        return None


async def resume_the_event_stream(settings: Settings) -> dict[str, Any]:
    traffic = CuttingTheEvents()
    async with meeting(settings, traffic, "--decline", "later", "--count", "3") as met:
        # Three challenges one after another (one between two players at a time): six events on
        # the client's stream, the fourth (the second's decline) lost in the cut.
        for n in range(3):
            answer = await met.answer_to(await met.challenge())
            if answer.status != C.CHALLENGE_STATUS_DECLINED:
                raise Failed(f"challenge {n + 1} was {status_word(answer.status)}, not declined")
        exited = True
        try:
            await met.exited(ANSWER_S)  # its stream shows the third decline at once
        except Failed:
            exited = False  # judged below, after the events it printed
        expected = await account_events_after(met, traffic.first_ready)
        seen = [json.loads(line)["event_id"] for line in met.launched.stdout if line.startswith("{")]
        if not traffic.cut:
            raise Failed("the runner could not cut the event stream (fewer than four events reached it)")
        missing = [e for e in expected if e not in seen]
        repeated = sorted({e for e in seen if seen.count(e) > 1})
        if missing or repeated:
            raise Failed(f"after the cut the client lost events {missing[:5]} and repeated {repeated[:5]}")
        if seen != expected:
            raise Failed("the client printed the events out of order")
        if not exited:
            raise Failed(f"the client did not exit after declining 3 challenges: {met.launched.stderr.strip()[-300:]}")
        return {"events": len(seen), "resumed_from": traffic.event_watches[1:]}


async def account_events_after(met: Meeting, after: str) -> list[str]:
    """Every event on the client's account stream after `after` (read with its token)."""
    reader = TafelClient(met.runner.channel)
    reader.session = play_pb2.Session(token=met.client_token)
    ids = []
    async with reader.event_stream(after) as events:
        with contextlib.suppress(TimeoutError):
            while True:
                ids.append((await events.next_event(1.0)).event_id)
    return ids


CLIENT_LINE = "hello from the client"


class CuttingTheChat(Traffic):
    """The client's chat watch is cut (UNAVAILABLE) at its third line, which is not delivered."""

    def __init__(self) -> None:
        super().__init__()
        self.cut = False

    def on_chat_message(self) -> Cut | None:
        if self.chat_messages == 3 and not self.cut:
            self.cut = True
            self.chat_messages -= 1
            return Cut(refusal_status(grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE", "cut by the conformance runner"))
        return None


def printed_lines(launched: Launched) -> list[dict[str, Any]]:
    return [json.loads(line) for line in launched.stdout if line.startswith("{")]


async def chat_in_a_game(settings: Settings) -> dict[str, Any]:
    """--chat GAME_ID --say TEXT --count 3: the runner and the client play a game (nobody moves);
    the runner's line is history when the client opens the players' channel, the client says its
    line, the runner answers with two more; the client's watch is cut at its third line."""
    traffic = CuttingTheChat()
    runner, account = await registered(settings), await registered(settings)
    proxy = await Proxy(settings.gateway, traffic).start()
    traffic.proxy = proxy
    launched: Launched | None = None
    assert account.session is not None
    try:
        made = await runner.create_challenge("connect4", username=account.player.username, per_move_s=300)
        game_id = (await account.accept_challenge(made.challenge_id)).game_id
        players = chat.channel("players", game_id)
        first = await runner.send_chat(players, "hello from the kit")
        async with runner.chat_stream(players, first.message_id) as lines:
            launched = await launch(
                settings, proxy, account.session.token, account.player.player_id, "connect4",
                "--chat", game_id, "--say", CLIENT_LINE, "--count", "3",
            )  # fmt: skip
            await live(
                traffic, launched, settings.timeout_s, traffic.chat_live, "its chat watch (ChatService.WatchChat)"
            )
            try:
                theirs = await lines.next_message(ANSWER_S)
            except TimeoutError:
                raise Failed(f"the client said nothing in the game's chat within {ANSWER_S:.0f} s") from None
            if theirs.author.player_id != account.player.player_id or theirs.text != CLIENT_LINE:
                raise Failed(f"the line after the runner's is {theirs.text!r}, not the client's {CLIENT_LINE!r}")
            for text in ("second line from the kit", "third line from the kit"):
                await runner.send_chat(players, text)
            code = await finish(launched, settings.timeout_s)
        kept = [m.message_id for m in (await runner.list_chat(players)).messages]
        seen = [str(line.get("message_id", "")) for line in printed_lines(launched)]
        if not traffic.cut:
            raise Failed("the runner could not cut the chat watch (fewer than three lines reached it)")
        missing = [m for m in kept if m not in seen]
        repeated = sorted({m for m in seen if seen.count(m) > 1})
        if missing or repeated:
            raise Failed(f"after the cut the client lost lines {missing[:5]} and repeated {repeated[:5]}")
        if seen != kept:
            raise Failed("the client printed the lines out of order (or lines not in the channel)")
        if code != 0:
            raise Failed(f"the client exited with {code} after the third line: {launched.stderr.strip()[-300:]}")
        return {"lines": len(seen), "resumed_from": traffic.chat_watches[1:]}
    finally:
        if launched is not None and launched.process.returncode is None:
            launched.process.kill()
            await launched.process.wait()
        await proxy.stop()
        for client in (runner, account):
            await client.close()


async def presence_of_a_followed_player(settings: Settings) -> dict[str, Any]:
    """--events --follow NAME --count 3: once the client follows the runner's player (who has no
    stream open yet), that player connects, sits down to a game and resigns it: online, playing,
    online on the client's event stream."""
    traffic = Traffic()
    followed, opponent, account = await registered(settings), await registered(settings), await registered(settings)
    proxy = await Proxy(settings.gateway, traffic).start()
    traffic.proxy = proxy
    launched: Launched | None = None
    name = followed.player.username
    assert account.session is not None
    try:
        launched = await launch(
            settings, proxy, account.session.token, account.player.player_id, "connect4",
            "--events", "--follow", name, "--count", "3",
        )  # fmt: skip
        await live(traffic, launched, settings.timeout_s)
        await live(traffic, launched, ANSWER_S, traffic.followed, f"following {name}", "FriendService.Follow")
        async with followed.event_stream():
            made = await opponent.create_challenge("connect4", username=name, per_move_s=300)
            game_id = (await followed.accept_challenge(made.challenge_id)).game_id
            await followed.wait_for_game(game_id)
            await followed.resign(game_id)
            code = await finish(launched, settings.timeout_s)
        told = [
            line for line in printed_lines(launched) if line.get("kind") == "presence" and line.get("username") == name
        ]
        states = [str(line.get("state")) for line in told]
        if states != ["online", "playing", "online"]:
            raise Failed(f"the client printed {name}'s presence as {states}, not ['online', 'playing', 'online']")
        if told[1].get("game_id") != game_id:
            raise Failed(f"'playing' names the game {told[1].get('game_id')!r}, not {game_id!r}")
        if traffic.calls["ListFollowing"] > POLLS:
            raise Failed(
                f"the client called ListFollowing {traffic.calls['ListFollowing']} times: "
                "follow the event stream instead of polling"
            )
        if code != 0:
            raise Failed(f"the client exited with {code}: {launched.stderr.strip()[-300:]}")
        return {"presence": states, "game_id": game_id}
    finally:
        if launched is not None and launched.process.returncode is None:
            launched.process.kill()
            await launched.process.wait()
        await proxy.stop()
        for client in (followed, opponent, account):
            await client.close()


SOCIAL: dict[str, Callable[[Settings], Awaitable[dict[str, Any]]]] = {
    "challenge-accepted": challenge_accepted,
    "challenge-declined": challenge_declined,
    "rematch": rematch,
    "draw-offer-answered": draw_offer_answered,
    "resume-events": resume_the_event_stream,
    "chat-in-a-game": chat_in_a_game,
    "presence-followed": presence_of_a_followed_player,
}
