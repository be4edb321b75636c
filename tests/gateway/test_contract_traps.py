"""The contract rules a client author relies on (docs/architecture.md, "Contract rules"), through the
public API: real rules services (all three games), a real gateway
and Redis; every client talks only gRPC to the gateway."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import grpc
import pytest
from tafel.bots.coloursquare import ColourSquareBot
from tafel.coloursquare.v1 import coloursquare_pb2
from tafel.connect4.v1 import connect4_pb2
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2, play_pb2_grpc
from tafel.plus4.v1 import plus4_pb2

from tests.gateway.harness import (
    Client,
    PlayStream,
    Proc,
    Seating,
    c4_move,
    failure,
    new_id,
    seating,
    spawn_gateway,
    spawn_rules,
)

GAMES = ("connect4", "plus4", "coloursquare")
COLUMNS = [3, 2, 3, 2, 3, 2, 3]  # seat 0 wins with four in column 3 at version 7


@dataclass
class System:
    redis_url: str
    rules: dict[str, Proc]
    gateway: Proc

    @property
    def routes(self) -> dict[str, str]:
        return {game: proc.address for game, proc in self.rules.items()}


@pytest.fixture(scope="module")
def system(redis_url: str) -> Iterator[System]:
    rules: dict[str, Proc] = {}
    gateway: Proc | None = None
    try:
        for game in GAMES:
            rules[game] = spawn_rules(redis_url, game)
        gateway = spawn_gateway(redis_url, {game: proc.address for game, proc in rules.items()})
        yield System(redis_url, rules, gateway)
    finally:
        for proc in (*([gateway] if gateway else []), *rules.values()):
            proc.stop()


@pytest.fixture(scope="module")
async def seats(system: System) -> AsyncIterator[Seating]:
    async with seating(system.redis_url, system.routes) as value:
        yield value


async def guests(system: System, count: int) -> list[Client]:
    return [await Client(system.gateway.address).guest() for _ in range(count)]


async def watch_all(client: Client, game_id: str, after: str = "") -> list[play_pb2.WatchGameResponse]:
    """Every response of a WatchGame call, which must end by itself (OK) within the timeout."""
    call = client.games.WatchGame(
        play_pb2.WatchGameRequest(game_id=game_id, after_event_id=after), metadata=client.md, timeout=10
    )
    return [response async for response in call]


async def finished_connect4(seats: Seating, a: Client, b: Client) -> str:
    game_id = await seats.start([a.player, b.player])
    for version, column in enumerate(COLUMNS):
        await (a if version % 2 == 0 else b).move(game_id, version, column)
    return game_id


# -- a finished game's watch ends; every event carries the status -----------------------------------


async def test_watching_a_finished_game_ends_and_every_event_carries_its_status(
    system: System, seats: Seating
) -> None:
    a, b = await guests(system, 2)
    game_id = await finished_connect4(seats, a, b)
    everything = await seats.event_ids(game_id)
    assert everything[-1] == "7-2"  # the winning disc and GameEnded

    history = await watch_all(b, game_id)
    assert [r.event.event_id for r in history] == everything
    for response in history:  # replayed events carry the status live ones do
        assert response.HasField("status"), response.event.event_id
        assert response.status.version == response.event.version
    assert history[-1].status.over and list(history[-1].status.outcome.winners) == [0]
    assert list(history[0].status.to_act) == [0] and list(history[1].status.to_act) == [1]

    # From the last id, or any id at the end: nothing left, the stream ends with OK at once.
    assert await watch_all(b, game_id, "7-2") == []
    rest = await watch_all(b, game_id, "6-1")
    assert [r.event.event_id for r in rest] == ["7-1", "7-2"] and all(r.HasField("status") for r in rest)

    # Past the end: OUT_OF_RANGE, never a silent skip. Malformed: INVALID_ARGUMENT.
    for after in ("7-3", "8-1", "99999-0"):
        code, reason = await failure(watch_all(b, game_id, after))
        assert (code, reason) == (grpc.StatusCode.OUT_OF_RANGE, "EVENT_ID_OUT_OF_RANGE"), after
    for after in ("abc", "1-", "-1", "+1-1", " 1-1", "1-1-1", "1.0-1"):
        code, reason = await failure(watch_all(b, game_id, after))
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_EVENT_ID"), after

    # The Play stream's watch: the same rules (a refusal on the stream, the watch ends quietly).
    stream = PlayStream(b)
    ack = await stream.request(watch=play_pb2.WatchGameRequest(game_id=game_id, after_event_id="0-0"))
    assert ack.watching.summary.status.over
    await stream.wait_for(lambda: len(stream.events) == len(everything))
    assert [e.event.event_id for e in stream.events] == everything
    assert all(e.HasField("status") and e.status.version == e.event.version for e in stream.events)
    refusal = (await stream.request(watch=play_pb2.WatchGameRequest(game_id=game_id, after_event_id="9-1"))).refusal
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.OUT_OF_RANGE.value[0], "EVENT_ID_OUT_OF_RANGE")
    refusal = (await stream.request(watch=play_pb2.WatchGameRequest(game_id=game_id, after_event_id="x"))).refusal
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT.value[0], "BAD_EVENT_ID")
    await stream.close()
    for client in (a, b):
        await client.close()


# Ids past what a Redis stream id holds (two unsigned 64-bit numbers) reached Redis and came back
# as UNAVAILABLE, which tells every client to retry a request that can never succeed.
TOO_BIG = ("99999999999999999999-1", "1-99999999999999999999", "18446744073709551616-0", "0-18446744073709551616")
GREATEST = ("18446744073709551615-18446744073709551615", "18446744073709551615-0", "9223372036854775808-0")


async def test_event_ids_past_64_bits_are_the_callers_mistake_never_an_outage(system: System, seats: Seating) -> None:
    a, b = await guests(system, 2)
    finished = await finished_connect4(seats, a, b)
    live = await seats.start([a.player, b.player])
    for game_id in (finished, live):
        for after in TOO_BIG:
            code, reason = await failure(watch_all(b, game_id, after))
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_EVENT_ID"), (game_id, after)
        for after in GREATEST:  # well-formed, and past the end of any game
            code, reason = await failure(watch_all(b, game_id, after))
            assert (code, reason) == (grpc.StatusCode.OUT_OF_RANGE, "EVENT_ID_OUT_OF_RANGE"), (game_id, after)
    stream = PlayStream(b)
    for game_id in (finished, live):
        for after, code, reason in (
            *((after, grpc.StatusCode.INVALID_ARGUMENT, "BAD_EVENT_ID") for after in TOO_BIG),
            *((after, grpc.StatusCode.OUT_OF_RANGE, "EVENT_ID_OUT_OF_RANGE") for after in GREATEST),
        ):
            answer = await stream.request(watch=play_pb2.WatchGameRequest(game_id=game_id, after_event_id=after))
            assert (answer.refusal.code, answer.refusal.reason) == (code.value[0], reason), (game_id, after)
    # The stream is still good for a proper watch afterwards.
    ack = await stream.request(watch=play_pb2.WatchGameRequest(game_id=finished, after_event_id="0-0"))
    assert ack.watching.summary.status.over
    await stream.close()
    for client in (a, b):
        await client.close()


async def test_a_live_watch_resumed_at_its_last_id_carries_statuses_and_ends_with_the_game(
    system: System, seats: Seating
) -> None:
    a, b = await guests(system, 2)
    game_id = await seats.start([a.player, b.player])
    for version, column in enumerate(COLUMNS[:3]):
        await (a if version % 2 == 0 else b).move(game_id, version, column)
    # A watcher resumes at the live end ("3-1"): nothing yet, then the rest as it happens.
    call = b.games.WatchGame(play_pb2.WatchGameRequest(game_id=game_id, after_event_id="3-1"), metadata=b.md, timeout=20)
    await call.initial_metadata()  # subscribed
    collected = asyncio.create_task(_collect(call))
    for version in range(3, len(COLUMNS)):
        await (a if version % 2 == 0 else b).move(game_id, version, COLUMNS[version])
    responses = await asyncio.wait_for(collected, 10)  # ends with the game, status OK
    assert [r.event.event_id for r in responses] == ["4-1", "5-1", "6-1", "7-1", "7-2"]
    assert all(r.status.version == r.event.version for r in responses)
    for client in (a, b):
        await client.close()


async def _collect(call: grpc.aio.UnaryStreamCall) -> list[play_pb2.WatchGameResponse]:
    return [response async for response in call]


# -- the Play stream's watch never sends history twice ----------------------------------------------


async def test_a_play_stream_watch_without_an_id_sends_the_view_then_only_later_events(
    system: System, seats: Seating
) -> None:
    a, b = await guests(system, 2)
    game_id = await seats.start([a.player, b.player])
    await a.move(game_id, 0, 3)
    await b.move(game_id, 1, 3)
    stream = PlayStream(a)
    ack = await stream.request(watch=play_pb2.WatchGameRequest(game_id=game_id))
    assert ack.watching.last_event_id == "2-1" and ack.watching.summary.status.version == 2
    await a.move(game_id, 2, 4)
    await stream.wait_for(lambda: any(e.event.event_id == "3-1" for e in stream.events))
    # History would have come before the live event (one writer, in order): none did.
    assert [e.event.event_id for e in stream.events] == ["3-1"]
    # With an id, the history from that id (a resume), after the same kind of answer.
    resumed = PlayStream(b)
    await resumed.request(watch=play_pb2.WatchGameRequest(game_id=game_id, after_event_id="1-1"))
    await resumed.wait_for(lambda: len(resumed.events) == 2)
    assert [e.event.event_id for e in resumed.events] == ["2-1", "3-1"]
    for closing in (stream, resumed):
        await closing.close()
    for client in (a, b):
        await client.close()


# -- simultaneous placements commute ----------------------------------------------------------------


async def test_six_seats_placing_at_the_same_instant_for_thirty_rounds_are_never_refused(
    system: System, seats: Seating
) -> None:
    players = await guests(system, 6)
    game_id = await seats.start([p.player for p in players], game="coloursquare")
    bots = [ColourSquareBot(level=1, seed=seat) for seat in range(6)]
    refused: list[str] = []

    async def place(seat: int, move: coloursquare_pb2.Move, version: int, start: asyncio.Event) -> int:
        await start.wait()  # all six leave together, each against the version it read
        request = play_pb2.SubmitMoveRequest(
            game_id=game_id, expected_version=version, request_id=new_id(), move=games_pb2.GameMove(coloursquare=move)
        )
        try:
            response = await players[seat].games.SubmitMove(request, metadata=players[seat].md, timeout=10)
        except grpc.aio.AioRpcError as error:
            refused.append(f"seat {seat} at version {version}: {error.code().name} {error.details()}")
            return -1
        return int(response.version)

    status = (await players[0].get(game_id)).summary.status
    for played in range(30):
        assert not status.over, f"the game ended after {played} rounds"
        assert list(status.to_act) == list(range(6)), "every seat places in a round"
        views = await asyncio.gather(*(p.get(game_id) for p in players))
        assert all(v.view.coloursquare.round == played + 1 for v in views)
        moves = [bot.choose(v.view.coloursquare) for bot, v in zip(bots, views, strict=True)]
        start = asyncio.Event()
        tasks = [asyncio.create_task(place(seat, move, status.version, start)) for seat, move in enumerate(moves)]
        await asyncio.sleep(0)
        start.set()
        versions = await asyncio.gather(*tasks)
        assert not refused, refused
        assert sorted(versions) == [status.version + i for i in range(1, 7)]
        status = (await players[0].get(game_id)).summary.status
    assert not refused
    for client in players:
        await client.close()


# -- every phase change has its event ---------------------------------------------------------------


async def test_colour_square_streams_round_one_roll_and_the_last_round_resolving(
    system: System, seats: Seating
) -> None:
    a, b = await guests(system, 2)
    game_id = await seats.start([a.player, b.player], game="coloursquare")
    for client in (a, b):
        await client.games.Resign(play_pb2.ResignRequest(game_id=game_id, request_id=new_id()), metadata=client.md)
    history = await watch_all(a, game_id)
    kinds = [
        r.event.coloursquare.WhichOneof("kind") if r.event.WhichOneof("kind") == "coloursquare"
        else r.event.WhichOneof("kind")
        for r in history
    ]
    assert kinds[:2] == ["created", "dice_rolled"]  # round 1's roll is in the stream
    assert history[1].event.coloursquare.dice_rolled.round == 1
    assert kinds[-2:] == ["round_resolved", "ended"]  # the round every seat left still resolves
    assert history[-1].event.ended.outcome.reason == "ALL_REMOVED"
    for client in (a, b):
        await client.close()


# -- a reused request id with another request -------------------------------------------------------


async def test_a_request_id_reused_for_another_move_is_refused_and_a_true_retry_gets_the_first_answer(
    system: System, seats: Seating
) -> None:
    a, b = await guests(system, 2)
    game_id = await seats.start([a.player, b.player])
    first = await a.move(game_id, 0, 3, request_id="same-id")
    assert first.version == 1
    code, reason = await failure(a.move(game_id, 0, 4, request_id="same-id"))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
    again = await a.move(game_id, 0, 3, request_id="same-id")
    assert again == first
    # The same on the Play stream, and nothing was written by the refused reuse.
    stream = PlayStream(a)
    move = play_pb2.SubmitMoveRequest(game_id=game_id, expected_version=1, request_id="same-id", move=c4_move(5))
    refusal = (await stream.request(submit_move=move)).refusal
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT.value[0], "REQUEST_ID_REUSED")
    assert "request id" in refusal.message
    assert await seats.event_ids(game_id) == ["0-1", "1-1"]
    await stream.close()
    for client in (a, b):
        await client.close()


# -- option values are listed as the values their fields take ---------------------------------------


async def test_every_listed_choice_is_a_value_its_field_takes_and_plus4_modes_are_enum_names(
    system: System,
) -> None:
    (client,) = await guests(system, 1)
    lobby = play_pb2_grpc.LobbyServiceStub(client.channel)
    listed = await lobby.ListGameTypes(play_pb2.ListGameTypesRequest(), metadata=client.md, timeout=10)
    assert {t.game for t in listed.game_types} >= set(GAMES)
    for game_type in listed.game_types:
        fields = getattr(games_pb2.GameOptions(), game_type.game).DESCRIPTOR.fields_by_name
        for spec in game_type.options:
            if spec.WhichOneof("values") != "choice":
                continue
            field = fields[spec.name]
            if field.enum_type is not None:
                names = [v.name for v in field.enum_type.values if v.number != 0]
                assert list(spec.choice.choices) == names, (game_type.game, spec.name)
                assert spec.choice.default_value in names
    plus4 = next(t for t in listed.game_types if t.game == "plus4")
    mode = next(s for s in plus4.options if s.name == "mode")
    assert list(mode.choice.choices) == ["MODE_POINTS", "MODE_FIRST_LINE", "MODE_ROUNDS"]
    coloursquare = next(t for t in listed.game_types if t.game == "coloursquare")
    assert next(s for s in coloursquare.options if s.name == "target").max_seats == 1
    # A listed name works as sent: a room in rounds mode, named as listed.
    options = games_pb2.GameOptions()
    options.plus4.mode = plus4_pb2.Mode.Value("MODE_ROUNDS")
    room = await lobby.CreateRoom(
        play_pb2.CreateRoomRequest(game="plus4", options=options), metadata=client.md, timeout=10
    )
    assert room.room.options.plus4.mode == plus4_pb2.MODE_ROUNDS
    await client.close()


async def test_a_column_the_board_lacks_is_failed_precondition_in_every_game(
    system: System, seats: Seating
) -> None:
    a, b = await guests(system, 2)
    for game, move in (
        ("connect4", games_pb2.GameMove(connect4=connect4_pb2.Move(column=7))),
        ("connect4", games_pb2.GameMove(connect4=connect4_pb2.Move(column=99999))),
        ("plus4", games_pb2.GameMove(plus4=plus4_pb2.Move(column=4))),
        ("plus4", games_pb2.GameMove(plus4=plus4_pb2.Move(column=99999))),
    ):
        game_id = await seats.start([a.player, b.player], game=game)
        request = play_pb2.SubmitMoveRequest(game_id=game_id, expected_version=0, request_id=new_id(), move=move)
        code, reason = await failure(a.games.SubmitMove(request, metadata=a.md, timeout=10))
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "COLUMN_OUT_OF_RANGE"), (game, move)
    for client in (a, b):
        await client.close()


# -- messages for people ----------------------------------------------------------------------------


REPR = re.compile(r"[A-Z][A-Za-z]*\([a-z_]+=|<[A-Za-z_.]+: |\b(?:None|True|False)\b|\\x[0-9a-f]{2}")


async def test_colour_square_refusals_read_as_sentences_without_python_values(
    system: System, seats: Seating
) -> None:
    a, b = await guests(system, 2)
    game_id = await seats.start([a.player, b.player], game="coloursquare")
    cell = coloursquare_pb2.Cell(row=9, column=0, colour=coloursquare_pb2.COLOUR_RED)
    bad = [
        coloursquare_pb2.Move(placements=[coloursquare_pb2.Placement(die=coloursquare_pb2.DIE_RED, cell=cell)]),
        coloursquare_pb2.Move(placements=[coloursquare_pb2.Placement(die=coloursquare_pb2.DIE_RED, joker=7)]),
        coloursquare_pb2.Move(placements=[coloursquare_pb2.Placement(die=coloursquare_pb2.DIE_WHITE, joker=0)]),
        coloursquare_pb2.Move(placements=[
            coloursquare_pb2.Placement(die=coloursquare_pb2.DIE_RED, joker=0),
            coloursquare_pb2.Placement(die=coloursquare_pb2.DIE_RED, joker=1),
        ]),
    ]
    for move in bad:
        request = play_pb2.SubmitMoveRequest(
            game_id=game_id, expected_version=0, request_id=new_id(), move=games_pb2.GameMove(coloursquare=move)
        )
        try:
            await a.games.SubmitMove(request, metadata=a.md, timeout=10)
        except grpc.aio.AioRpcError as error:
            message = error.details() or ""
            assert message and not REPR.search(message), message
            assert "Cell" not in message and "Die." not in message, message
        else:
            raise AssertionError(f"{move} was accepted")
    for client in (a, b):
        await client.close()


# -- options are checked when the request arrives ---------------------------------------------------


async def test_a_solo_only_option_is_refused_when_a_room_or_a_match_is_asked_for(system: System) -> None:
    (client,) = await guests(system, 1)
    lobby = play_pb2_grpc.LobbyServiceStub(client.channel)
    target = games_pb2.GameOptions(coloursquare=coloursquare_pb2.Options(target=50))
    for seats in (2, 6, 0):
        code, reason = await failure(
            lobby.CreateRoom(
                play_pb2.CreateRoomRequest(game="coloursquare", seats=seats, options=target),
                metadata=client.md, timeout=10,
            )
        )
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "OPTION_NOT_FOR_SEATS"), seats
    for low, high in ((2, 2), (0, 0), (1, 6)):
        call = lobby.FindMatch(
            play_pb2.FindMatchRequest(game="coloursquare", options=target, min_seats=low, max_seats=high),
            metadata=client.md, timeout=10,
        )
        code, reason = await failure(call.read())
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "OPTION_NOT_FOR_SEATS"), (low, high)
    # The same on the Play stream's find_match, answered at once.
    stream = PlayStream(client)
    refusal = (await stream.request(
        find_match=play_pb2.FindMatchRequest(game="coloursquare", options=target, min_seats=2, max_seats=3)
    )).refusal
    assert refusal.reason == "OPTION_NOT_FOR_SEATS" and "solo" in refusal.message
    await stream.close()
    # Solo: accepted (the room starts at once).
    room = await lobby.CreateRoom(
        play_pb2.CreateRoomRequest(game="coloursquare", seats=1, options=target), metadata=client.md, timeout=10
    )
    assert room.room.game_id and room.room.options.coloursquare.target == 50
    await client.close()
