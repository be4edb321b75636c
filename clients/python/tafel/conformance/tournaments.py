"""The scenarios of joining a tournament and playing its games. The client runs with
--tournament ID (docs/clients.md, "The conformance kit"): it joins (with --code, the invitation
code), follows the tournament's events and plays every game it is paired in. The runner organises
the tournament, seats two level-1 bots of its own in it and starts it.

- tournament-swiss: a two-round Swiss of three with an invitation code. The client's tournament
  feed is cut once (UNAVAILABLE); it must resume after the last event it printed (nothing lost or
  twice), play its games to the end with legal moves and exit once the tournament is over.
- tournament-arena: an arena of three; the client plays each game it is paired in as soon as the
  arena pairs it (never waiting for a round) and exits after two; the runner then ends the arena.

Registered in SCENARIOS by catalog.py."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from typing import Any

import grpc

from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.client import TafelClient
from tafel.conformance.proxy import Cut, Proxy, Reply
from tafel.conformance.scenarios import Failed, Launched, Settings, finish, launch
from tafel.conformance.traffic import Traffic, refusal_status
from tafel.play.v1 import tournaments_pb2 as tp
from tafel.requests import duration

TOURNAMENT_WATCH = "/tafel.play.v1.TournamentService/WatchTournament"
CODE = "conformance-2026"


class FeedTraffic(Traffic):
    """Records the client's tournament watches; cuts the feed once after `cut_after` events (0: never)."""

    def __init__(self, cut_after: int = 0) -> None:
        super().__init__()
        self.cut_after = cut_after
        self.cut = False
        self.feed_requests: list[str] = []  # after_event_id of each WatchTournament
        self.feed_events: list[str] = []  # the event ids sent down the client's feeds
        self.joined = asyncio.Event()

    def request(self, method: str, raw: bytes) -> Cut | Reply | None:
        if method == TOURNAMENT_WATCH:
            self.feed_requests.append(tp.WatchTournamentRequest.FromString(raw).after_event_id)
        return super().request(method, raw)

    def response(self, method: str, raw: bytes) -> Cut | None:
        if method.endswith("/JoinTournament"):
            self.joined.set()
        if method != TOURNAMENT_WATCH:
            return super().response(method, raw)
        event_id = tp.WatchTournamentResponse.FromString(raw).event.event_id
        if self.cut_after and not self.cut and len(self.feed_events) == self.cut_after:
            self.cut = True  # this event is not delivered: the resumed feed must bring it
            return Cut(refusal_status(grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE", "cut by the conformance runner"))
        self.feed_events.append(event_id)
        return None


async def registered(settings: Settings) -> TafelClient:
    client = await TafelClient.connect(settings.gateway)
    await client.register(f"conf-{secrets.token_hex(6)}", secrets.token_urlsafe(18))
    return client


async def bot_player(client: TafelClient, tournament_id: str, timeout_s: float, games: list[str]) -> None:
    """One of the runner's players: plays every game the tournament pairs it in (level-1 bot)."""
    me = client.player.player_id
    async for event in client.watch_tournament(tournament_id):
        kind = event.WhichOneof("kind")
        paired = (
            list(event.round_started.round.games)
            if kind == "round_started"
            else [event.arena_game_started.game]
            if kind == "arena_game_started"
            else []
        )
        for game in paired:
            if game.game_id and any(p.player_id == me for p in game.players):
                seat = (await client.wait_for_game(game.game_id)).seat
                games.append(game.game_id)
                await play_game(client, game.game_id, seat, strategy_for("connect4", 1), timeout_s=timeout_s)


class Tournament:
    """The runner's side: the organiser, two bots and the client under test's account."""

    def __init__(self, settings: Settings, traffic: FeedTraffic) -> None:
        self.settings = settings
        self.traffic = traffic
        self.tasks: list[asyncio.Task[None]] = []
        self.bot_games: list[str] = []

    async def __aenter__(self) -> Tournament:
        s = self.settings
        self.organiser = await registered(s)
        self.bots = [await registered(s), await registered(s)]
        self.player = await registered(s)
        self.proxy = await Proxy(s.gateway, self.traffic).start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(BaseException):
                await task
        await self.proxy.stop()
        for client in (self.organiser, *self.bots, self.player):
            await client.close()

    async def seat_bots(self, tournament_id: str, code: str = "") -> None:
        for bot in self.bots:
            await bot.join_tournament(tournament_id, invitation_code=code)
            self.tasks.append(
                asyncio.create_task(bot_player(bot, tournament_id, self.settings.timeout_s, self.bot_games))
            )

    async def launch(self, tournament_id: str, *args: str) -> Launched:
        assert self.player.session is not None
        launched = await launch(
            self.settings,
            self.proxy,
            self.player.session.token,
            self.player.player.player_id,
            "connect4",
            "--tournament",
            tournament_id,
            *args,
        )
        joining = asyncio.ensure_future(self.traffic.joined.wait())
        exited = asyncio.ensure_future(launched.process.wait())
        try:
            done, _ = await asyncio.wait(
                (joining, exited), timeout=self.settings.timeout_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            joining.cancel()
            exited.cancel()
        if exited in done:
            await finish(launched, 1)
            said = launched.stderr[-300:]
            raise Failed(f"the client exited with {launched.process.returncode} before joining: {said}")
        if not done:
            raise Failed("the client did not join the tournament (JoinTournament)")
        # Joined: the tournament lists it (the answer reached the proxy before the client).
        for _ in range(50):
            listed = await self.organiser.get_tournament(tournament_id)
            if any(p.player_id == self.player.player.player_id for p in listed.players):
                return launched
            await asyncio.sleep(0.1)
        raise Failed("JoinTournament was answered, but the client is not among the players")

    async def client_games(self, tournament_id: str) -> list[tp.TournamentGame]:
        games = await self.organiser.tournament_games(tournament_id, player_id=self.player.player.player_id)
        return [g for g in games if g.state != tp.TOURNAMENT_GAME_STATE_BYE]


def printed(launched: Launched) -> list[dict[str, Any]]:
    lines = []
    for line in launched.stdout:
        if line.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):
                lines.append(json.loads(line))
    return lines


def played_fairly(games: list[tp.TournamentGame], me: str) -> None:
    """Every game of the client's finished on the board: none missed (no move in time) or forfeited."""
    for game in games:
        seat = next(i for i, p in enumerate(game.players) if p.player_id == me)
        if game.state != tp.TOURNAMENT_GAME_STATE_FINISHED:
            name = tp.TournamentGameState.Name(game.state)
            raise Failed(f"the client's game {game.game_id or game.board} ended {name}, not played to the end")
        if game.missed[seat] if len(game.missed) > seat else False:
            raise Failed(f"the client missed its game {game.game_id} (made no move in time)")


async def tournament_swiss(settings: Settings) -> dict[str, Any]:
    traffic = FeedTraffic(cut_after=3)
    async with Tournament(settings, traffic) as run:
        t = await run.organiser.create_tournament(
            name="Conformance Swiss",
            game="connect4",
            format=tp.TOURNAMENT_FORMAT_SWISS,
            rounds=2,
            capacity=3,
            time_control={"per_move": duration(30)},
            entry=tp.EntryConditions(invitation_required=True),
            invitation_code=CODE,
        )
        tid = t.tournament_id
        await run.seat_bots(tid, CODE)
        launched = await run.launch(tid, "--code", CODE, "--count", "0")
        await run.organiser.start_tournament(tid)
        code = await finish(launched, settings.timeout_s * 1.5)
        if code != 0:
            raise Failed(f"the client exited with {code}: {launched.stderr.strip()[-300:]}")
        final = await run.organiser.standings(tid)
        if not final.final:
            raise Failed("the client exited before the tournament was over")
        me = run.player.player.player_id
        games = await run.client_games(tid)
        if not games:
            raise Failed("the client was paired in no game")
        played_fairly(games, me)
        lines = printed(launched)
        seen = [line.get("event_id", "") for line in lines]
        repeated = sorted({e for e in seen if seen.count(e) > 1})
        if not traffic.cut:
            raise Failed("the tournament ended before the runner could cut the client's feed")
        expected = [e.event_id async for e in run.organiser.watch_tournament(tid)]
        missing = [e for e in expected if e not in seen]
        if missing or repeated:
            raise Failed(f"after the cut the client lost events {missing[:5]} and repeated {repeated[:5]}")
        if traffic.feed_requests[1:2] != [traffic.feed_events[2]]:
            raise Failed(f"the cut feed was resumed from {traffic.feed_requests[1:2]}, not the last event printed")
        if "finished" not in [line.get("kind") for line in lines]:
            raise Failed("the client did not print the tournament's end")
        resumed = traffic.feed_requests[1]
        return {"tournament_id": tid, "games": len(games), "events": len(seen), "resumed_from": resumed}


async def tournament_arena(settings: Settings) -> dict[str, Any]:
    traffic = FeedTraffic()
    async with Tournament(settings, traffic) as run:
        t = await run.organiser.create_tournament(
            name="Conformance arena",
            game="connect4",
            format=tp.TOURNAMENT_FORMAT_ARENA,
            time_control={"per_move": duration(30)},
            arena_duration=duration(300),
        )
        tid = t.tournament_id
        await run.seat_bots(tid)
        launched = await run.launch(tid, "--count", "2")
        await run.organiser.start_tournament(tid)
        me = run.player.player.player_id
        try:
            code = await finish(launched, settings.timeout_s * 1.5)
            # The arena takes a finished game's result at its next wave: wait for it before the end.
            for _ in range(100):
                games = await run.client_games(tid)
                if sum(g.state == tp.TOURNAMENT_GAME_STATE_FINISHED for g in games) >= 2:
                    break
                await asyncio.sleep(0.1)
        finally:
            with contextlib.suppress(Exception):
                await run.organiser.terminate_tournament(tid, "the conformance run is over")
        if code != 0:
            raise Failed(f"the client exited with {code}: {launched.stderr.strip()[-300:]}")
        games = [g for g in await run.client_games(tid) if g.state != tp.TOURNAMENT_GAME_STATE_ABORTED]
        if len(games) < 2:
            raise Failed(f"the client exited after {len(games)} arena game(s), not 2")
        played_fairly(games[:2], me)
        opponents = [next(p.player_id for p in g.players if p.player_id != me) for g in games[:2]]
        return {"tournament_id": tid, "games": len(games), "opponents": len(set(opponents))}


TOURNAMENTS = {
    "tournament-swiss": tournament_swiss,
    "tournament-arena": tournament_arena,
}
