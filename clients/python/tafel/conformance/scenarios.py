"""The scenarios. Each sets a table up through the public API, launches the client under test
through the proxy, plays the other seats itself (level-1 bots), and judges the run from the
proxy's record, the game's record and the client's exit and output."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
from google.protobuf.message import Message

from tafel.autoplay import play_game
from tafel.botplay import strategy_for
from tafel.by_game import REGISTRY
from tafel.client import TafelClient
from tafel.coloursquare.v1 import coloursquare_pb2
from tafel.conformance.proxy import Cut, Proxy, Reply
from tafel.conformance.traffic import PLAY, Traffic, refusal_status
from tafel.play.v1 import play_pb2


class Gateways(Protocol):
    """Control over the platform's gateway processes (when the kit started the platform)."""

    @property
    def addresses(self) -> Sequence[str]: ...

    def kill(self, index: int) -> None: ...

    def restart(self, index: int) -> None: ...


@dataclass
class Settings:
    gateway: str  # the platform's gateway, HOST:PORT (the runner talks to it directly)
    client: Sequence[str]  # the command of the client under test, before the kit's arguments
    clock_s: float = 2.0  # the per-move time of the clock scenario
    timeout_s: float = 60.0  # per scenario
    gateways: Gateways | None = None  # two or more, when the kit runs the platform itself


@dataclass
class Result:
    name: str
    passed: bool
    reason: str
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Launched:
    process: asyncio.subprocess.Process
    player_id: str
    stdout: list[str] = field(default_factory=list)
    stderr: str = ""


@dataclass
class TableRun:
    game_id: str
    record: play_pb2.GameRecord
    clients: list[Launched]
    client_seats: list[int]


class Failed(Exception):
    """The scenario failed for the reason given."""


async def guest(settings: Settings, address: str = "") -> TafelClient:
    client = await TafelClient.connect(address or settings.gateway)
    await client.sign_in_as_guest()
    return client


async def launch(settings: Settings, proxy: Proxy, token: str, player_id: str, game: str, *args: str) -> Launched:
    process = await asyncio.create_subprocess_exec(
        *settings.client, "--server", proxy.address, "--token", token, "--game", game, *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    return Launched(process, player_id)


async def finish(launched: Launched, timeout_s: float) -> int:
    """Wait for the client to exit (killing it at the deadline); keep what it printed."""
    try:
        out, err = await asyncio.wait_for(launched.process.communicate(), timeout_s)
    except TimeoutError:
        launched.process.kill()
        out, err = await launched.process.communicate()
        launched.stdout, launched.stderr = out.decode().splitlines(), err.decode()[-2000:]
        raise Failed(f"the client did not exit within {timeout_s:.0f} s") from None
    launched.stdout, launched.stderr = out.decode().splitlines(), err.decode()[-2000:]
    return launched.process.returncode or 0


async def room_started(host: TafelClient, code: str, launched: Sequence[Launched], timeout_s: float) -> play_pb2.Room:
    """The room once it starts; a client that exits first fails the scenario with what it said."""
    starting = asyncio.ensure_future(host.wait_room_started(code))
    exits = [asyncio.ensure_future(c.process.wait()) for c in launched]
    try:
        done, _ = await asyncio.wait((starting, *exits), timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        if starting in done:
            return starting.result()
        for client, exited in zip(launched, exits, strict=True):
            if exited in done:
                assert client.process.stderr is not None
                said = (await client.process.stderr.read()).decode().strip()[-400:]
                raise Failed(f"the client exited with {exited.result()} before the game started: {said}")
        raise Failed(f"the room did not start within {timeout_s:.0f} s (did the client join it?)")
    finally:
        for task in (starting, *exits):
            task.cancel()


async def table(
    settings: Settings,
    game: str,
    traffic: Traffic,
    *,
    options: Message | None = None,
    seats: int = 2,
    clients: int = 1,
    per_move_s: float = 30.0,
    client_args: Sequence[str] = (),
    upstreams: Sequence[str] = (),
) -> TableRun:
    """A room of `seats`: the runner's players take seats - clients, the client under test
    (`clients` copies, own accounts) the rest; every seat is played to the end. The client's
    traffic goes to `upstreams` (default: the gateway), the runner's to the last of them."""
    own = upstreams[-1] if upstreams else ""
    host = await guest(settings, own)
    runners = [host] + [await guest(settings, own) for _ in range(seats - clients - 1)]
    proxy = await Proxy(upstreams or settings.gateway, traffic).start()
    traffic.proxy = proxy
    launched: list[Launched] = []
    bot_games: list[asyncio.Future[Any]] = []
    try:
        room = await host.create_room(game, options, seats=seats, per_move_s=per_move_s)
        for runner in runners[1:]:
            await runner.join_room(room.code)
        for _ in range(clients):
            account = await guest(settings, own)
            assert account.session is not None
            launched.append(
                await launch(settings, proxy, account.session.token, account.player.player_id, game,
                             "--room", room.code, *client_args)
            )  # fmt: skip
            await account.close()
        started = await room_started(host, room.code, launched, settings.timeout_s)
        seats_of = [(await r.wait_for_game(started.game_id)).seat for r in runners]
        bot_games += [
            asyncio.ensure_future(
                play_game(r, started.game_id, seat, strategy_for(game, 1), timeout_s=settings.timeout_s)
            )
            for r, seat in zip(runners, seats_of, strict=True)
        ]
        codes = await asyncio.gather(*(finish(c, settings.timeout_s) for c in launched))
        await asyncio.wait_for(asyncio.gather(*bot_games, return_exceptions=True), settings.timeout_s)
        for code, client in zip(codes, launched, strict=True):
            if code != 0:
                raise Failed(f"the client exited with {code}: {client.stderr.strip()[-300:]}")
        record = await host.get_record(started.game_id)
        ids = {c.player_id for c in launched}
        client_seats = [p.seat for p in record.players if p.player.player_id in ids]
        return TableRun(started.game_id, record, launched, client_seats)
    finally:
        for client in launched:
            if client.process.returncode is None:
                client.process.kill()
                await client.process.wait()
        for task in bot_games:
            task.cancel()
        await asyncio.gather(*bot_games, return_exceptions=True)
        await proxy.stop()
        for runner in runners:
            await runner.close()


def played_legally(run: TableRun, traffic: Traffic, *, injected: int = 0) -> dict[str, Any]:
    """The common judgement: finished, every client seat moved and never ran out of time, no
    move of the client refused as illegal (beyond the refusals the scenario injected)."""
    actions = run.record.actions
    for seat in run.client_seats:
        if any(a.seat == seat and a.WhichOneof("action") == "timed_out" for a in actions):
            raise Failed(f"seat {seat}'s clock ran out")
        if not any(a.seat == seat and a.WhichOneof("action") == "move" for a in actions):
            raise Failed(f"seat {seat} made no move")
    illegal = traffic.illegal()
    if len(illegal) > injected:
        raise Failed(f"moves refused as illegal: {illegal[injected:][:5]}")
    return {
        "game_id": run.game_id,
        "outcome": run.record.outcome.reason,
        "client_moves": sum(1 for a in actions if a.seat in run.client_seats and a.WhichOneof("action") == "move"),
        "refusals": traffic.refusals,
    }


# Each game played to the end in a short form (its client module's short_options).
GAME_OPTIONS: dict[str, Message | None] = {name: module.short_options for name, module in REGISTRY.items()}


def play_to_the_end(game: str) -> Callable[[Settings], Awaitable[dict[str, Any]]]:
    async def scenario(settings: Settings) -> dict[str, Any]:
        traffic = Traffic()
        run = await table(settings, game, traffic, options=GAME_OPTIONS[game])
        if not run.record.outcome.reason:
            raise Failed("the game has no outcome")
        return played_legally(run, traffic)

    return scenario


class Refusing(Traffic):
    """The client's first move is refused ABORTED (the game moved on), its second is cut with
    UNAVAILABLE; neither reaches the gateway."""

    def on_move(self, method: str, move: play_pb2.SubmitMoveRequest, correlation_id: int) -> Cut | Reply | None:
        if len(self.moves) == 1:
            status = refusal_status(grpc.StatusCode.ABORTED, "VERSION_MISMATCH", "the game moved on")
            if method == PLAY:
                refusal = play_pb2.Refusal(code=status.code, reason="VERSION_MISMATCH", message=status.message)
                refusal.current_version = move.expected_version
                return Reply(play_pb2.PlayResponse(correlation_id=correlation_id, refusal=refusal).SerializeToString())
            return Cut(status)
        if len(self.moves) == 2:
            return Cut(refusal_status(grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE", "cut by the conformance runner"))
        return None


async def recover_from_refusals(settings: Settings) -> dict[str, Any]:
    traffic = Refusing()
    run = await table(settings, "connect4", traffic)
    return played_legally(run, traffic)


class DroppingAnAnswer(Traffic):
    """The client's second accepted move: the gateway applies it, the answer is lost (the call
    or stream cut with UNAVAILABLE). The client must send that move again with the same request
    id (the first answer comes back), never as a new request."""

    def __init__(self) -> None:
        super().__init__()
        self.accepted = 0
        self.dropped: play_pb2.SubmitMoveRequest | None = None

    def on_accepted(self, move: play_pb2.SubmitMoveRequest) -> Cut | None:
        self.accepted += 1
        if self.accepted == 2 and self.dropped is None:
            self.dropped = move
            return Cut(refusal_status(grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE", "cut by the conformance runner"))
        return None


async def retry_with_the_same_request_id(settings: Settings) -> dict[str, Any]:
    traffic = DroppingAnAnswer()
    run = await table(settings, "connect4", traffic)
    details = same_request_id_after_the_cut(traffic)
    details.update(played_legally(run, traffic))
    return details


def same_request_id_after_the_cut(traffic: DroppingAnAnswer) -> dict[str, Any]:
    if traffic.dropped is None:
        raise Failed("the client made fewer than two moves: nothing to drop")
    dropped = traffic.dropped
    after = traffic.moves[traffic.moves.index(dropped) + 1 :]
    if not after:
        raise Failed("after the cut the client never sent its move again")
    retry = after[0]
    if retry.request_id != dropped.request_id:
        raise Failed(
            f"after the cut the client sent the move again with a new request id ({retry.request_id!r}, first "
            f"{dropped.request_id!r}): a retry must reuse the id so that the platform answers it, not refuses it"
        )
    return {"retried_request_id": retry.request_id}


class CuttingAWatch(Traffic):
    """The client's watch is cut (UNAVAILABLE) after three events, the fourth undelivered."""

    def __init__(self) -> None:
        super().__init__()
        self.cut = False
        self.watching = asyncio.Event()

    def request(self, method: str, raw: bytes) -> Cut | Reply | None:
        action = super().request(method, raw)
        if self.watch_requests:
            self.watching.set()
        return action

    def on_event(self) -> Cut | None:
        if self.events_delivered == 4 and not self.cut:
            self.cut = True
            self.events_delivered -= 1
            return Cut(refusal_status(grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE", "cut by the conformance runner"))
        return None


async def resume_a_watch(settings: Settings) -> dict[str, Any]:
    traffic = CuttingAWatch()
    players = [await guest(settings), await guest(settings)]
    watcher = await guest(settings)
    proxy = await Proxy(settings.gateway, traffic).start()
    launched: Launched | None = None
    try:
        # A room's game is open to spectators only when its host says so.
        request = play_pb2.CreateRoomRequest(game="connect4", seats=2, watchable=True)
        room = (await players[0].lobby.CreateRoom(request, metadata=players[0].metadata(), timeout=10)).room
        await players[1].join_room(room.code)
        started = await players[0].wait_room_started(room.code)
        game_id = started.game_id
        assert watcher.session is not None
        launched = await launch(settings, proxy, watcher.session.token, "", "connect4", "--watch", game_id)
        await asyncio.wait_for(traffic.watching.wait(), settings.timeout_s)
        seats = [(await p.wait_for_game(game_id)).seat for p in players]
        await asyncio.gather(*(
            play_game(p, game_id, seat, strategy_for("connect4", 1), think_s=0.05, timeout_s=settings.timeout_s)
            for p, seat in zip(players, seats, strict=True)
        ))  # fmt: skip
        expected = [event.event_id async for event in watcher.watch(game_id)]
        code = await finish(launched, settings.timeout_s)
        if code != 0:
            raise Failed(f"the client exited with {code}: {launched.stderr.strip()[-300:]}")
        seen = [json.loads(line)["event_id"] for line in launched.stdout if line.startswith("{")]
        if not traffic.cut:
            raise Failed("the game ended before the runner could cut the watch")
        missing = [e for e in expected if e not in seen]
        repeated = sorted({e for e in seen if seen.count(e) > 1})
        if missing or repeated:
            raise Failed(f"after the cut the client lost events {missing[:5]} and repeated {repeated[:5]}")
        if seen != expected:
            raise Failed("the client printed the events out of order")
        return {"game_id": game_id, "events": len(seen), "resumed_from": traffic.watch_requests[1:]}
    finally:
        if launched is not None and launched.process.returncode is None:
            launched.process.kill()
            await launched.process.wait()
        await proxy.stop()
        for client in (*players, watcher):
            await client.close()


async def six_seat_round(settings: Settings) -> dict[str, Any]:
    traffic = Traffic()
    run = await table(
        settings, "coloursquare", traffic, options=coloursquare_pb2.Options(max_rounds=4), seats=6, clients=2,
        per_move_s=15.0,
    )  # fmt: skip
    details = played_legally(run, traffic)
    details["aborted"] = sum(1 for code, _ in traffic.refusals if code == "ABORTED")
    return details


async def act_before_the_clock(settings: Settings) -> dict[str, Any]:
    traffic = Traffic()
    run = await table(settings, "connect4", traffic, per_move_s=settings.clock_s)
    details = played_legally(run, traffic)
    details["per_move_s"] = settings.clock_s
    return details


async def resign_cleanly(settings: Settings) -> dict[str, Any]:
    traffic = Traffic()
    run = await table(settings, "connect4", traffic, client_args=("--resign",))
    (seat,) = run.client_seats
    if not any(a.seat == seat and a.WhichOneof("action") == "resigned" for a in run.record.actions):
        raise Failed("the record has no resignation by the client's seat")
    if run.record.outcome.reason != "RESIGNED" or seat in run.record.outcome.winners:
        raise Failed(f"the game ended {run.record.outcome.reason} with winners {list(run.record.outcome.winners)}")
    if traffic.refusals:
        raise Failed(f"refusals: {traffic.refusals}")
    return {"game_id": run.game_id, "resignations_sent": traffic.resignations}


class KillingTheGateway(DroppingAnAnswer):
    """As DroppingAnAnswer, but the answer is lost because the client's gateway dies (SIGKILL)
    right after applying the move: every call the client has open on it breaks, and the proxy
    sends what follows to the platform's other gateway, as a load balancer would."""

    def __init__(self, gateways: Gateways) -> None:
        super().__init__()
        self.gateways = gateways

    def on_accepted(self, move: play_pb2.SubmitMoveRequest) -> Cut | None:
        cut = super().on_accepted(move)
        if cut is not None and self.proxy is not None:
            self.gateways.kill(0)
            self.proxy.current = 1
        return cut


async def restart_a_gateway(settings: Settings) -> dict[str, Any]:
    gateways = settings.gateways
    if gateways is None or len(gateways.addresses) < 2:
        raise Failed("needs the kit's own platform (run without --server): it kills and restarts a gateway")
    traffic = KillingTheGateway(gateways)
    try:
        run = await table(settings, "connect4", traffic, upstreams=gateways.addresses)
    finally:
        if traffic.dropped is not None:
            await asyncio.to_thread(gateways.restart, 0)
    details = same_request_id_after_the_cut(traffic)
    details.update(played_legally(run, traffic))
    return details


SCENARIOS: dict[str, Callable[[Settings], Awaitable[dict[str, Any]]]] = {
    **{f"play-{name}": play_to_the_end(name) for name in REGISTRY},
    "recover-from-refusals": recover_from_refusals,
    "retry-same-request-id": retry_with_the_same_request_id,
    "resume-watch": resume_a_watch,
    "six-seat-round": six_seat_round,
    "act-before-clock": act_before_the_clock,
    "resign": resign_cleanly,
    "gateway-restart": restart_a_gateway,
}
# Scenarios that need the kit to run the platform itself.
OWN_PLATFORM = frozenset({"gateway-restart"})
