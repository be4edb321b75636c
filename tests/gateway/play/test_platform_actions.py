"""The gateway's action path for the actions players agree on: Actions.apply passes a
draw, an abort and a take-back to the rules service; a draw or an abort ends the game through the
usual end (record, live lists, ratings), and an aborted rated game is rated by no one."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2
from tafel.rules.v1 import rules_pb2

from gateway.actions import Actions
from gateway.ratings.book import RatingBook
from gateway.ratings.pools import RatingPools
from gateway.records import Records, current_line
from kit.redis.keys import clock_key, live_key
from tests.gateway.harness import Seating, c4_move, seating, spawn_rules
from tests.gateway.local_games import local_catalogue


@pytest.fixture(scope="module")
def rules_address(redis_url: str) -> Iterator[str]:
    proc = spawn_rules(redis_url)
    try:
        yield proc.address
    finally:
        proc.stop()


@pytest.fixture
async def parts(redis_url: str, rules_address: str) -> AsyncIterator[tuple[Seating, Actions, RatingBook]]:
    async with seating(redis_url, {"connect4": rules_address}) as seats:
        records = Records(seats.directory.layer, seats.reads)
        book = RatingBook(seats.directory.layer, RatingPools(local_catalogue()))
        book.attach(records)
        yield seats, Actions(seats.directory, seats.router, seats.directory.clocks, records), book


def players() -> list[play_pb2.Player]:
    tag = uuid.uuid4().hex[:8]
    return [play_pb2.Player(player_id=f"p-{tag}-{n}", username=f"u{tag}{n}") for n in range(2)]


async def rated_game(seats: Seating, seated: list[play_pb2.Player]) -> str:
    return await seats.directory.start_game(
        game="connect4", options=games_pb2.GameOptions(), players=seated, per_move_s=60.0, rated=True, origin="test"
    )


async def test_an_aborted_rated_game_ends_with_a_record_and_changes_no_rating(
    parts: tuple[Seating, Actions, RatingBook],
) -> None:
    seats, actions, book = parts
    seated = players()
    game_id = await rated_game(seats, seated)
    meta = await seats.directory.meta(game_id)
    await actions.apply(meta, 0, expected_version=0, request_id="s0-m1", move=c4_move(3))
    applied = await actions.apply(meta, 1, expected_version=1, request_id="s1-abort", abort=True)
    outcome = applied.response.status.outcome
    assert applied.response.status.over and applied.deadline is None
    assert (outcome.reason, outcome.draw, list(outcome.winners)) == ("ABORTED", False, [])
    record = await actions.records.get(game_id)
    assert record.outcome.reason == "ABORTED" and not record.rated
    assert record.actions[-1].WhichOneof("action") == "aborted"
    assert await seats.redis.zscore(live_key(), game_id) is None
    for player in seated:
        assert await book.stored("connect4", player.player_id) is None, "an aborted game changed a rating"
    # Marked rated or not, an aborted record is never applied (the sweeper's path too).
    record.rated = True
    assert await book.apply_record(record) == "skipped"


async def test_a_draw_agreed_ends_a_rated_game_as_a_rated_draw(parts: tuple[Seating, Actions, RatingBook]) -> None:
    seats, actions, book = parts
    seated = players()
    game_id = await rated_game(seats, seated)
    meta = await seats.directory.meta(game_id)
    await actions.apply(meta, 0, expected_version=0, request_id="s0-m1", move=c4_move(3))
    applied = await actions.apply(meta, 0, expected_version=1, request_id="s0-draw", draw_agreed=True)
    assert applied.response.status.outcome.reason == "DRAW_AGREED" and applied.response.status.outcome.draw
    record = await actions.records.get(game_id)
    assert record.rated and record.actions[-1].WhichOneof("action") == "draw_agreed"
    assert await seats.redis.zscore(live_key(), game_id) is None
    ratings = [await book.stored("connect4", player.player_id) for player in seated]
    assert all(stored is not None and stored.games == 1 for stored in ratings)
    assert ratings[0] is not None and ratings[1] is not None
    assert ratings[0].rating.rating == pytest.approx(ratings[1].rating.rating)


async def test_a_take_back_goes_on_with_the_clock_armed(parts: tuple[Seating, Actions, RatingBook]) -> None:
    seats, actions, _ = parts
    game_id = await rated_game(seats, players())
    meta = await seats.directory.meta(game_id)
    for version, column in enumerate((3, 4, 3)):
        await actions.apply(meta, version % 2, expected_version=version, request_id=f"m{version}", move=c4_move(column))
    applied = await actions.apply(meta, 1, expected_version=3, request_id="s1-back", take_back_to=1)
    response = applied.response
    assert response.version == 4 and list(response.status.to_act) == [1] and not response.status.over
    assert [event.WhichOneof("kind") for event in response.events] == ["taken_back"]
    assert applied.deadline is not None
    clock = await seats.redis.hgetall(clock_key(game_id))
    assert clock[b"v"] == b"4" and clock[b"a"] == b"1"
    view = await seats.router.get_view("connect4", rules_pb2.GetViewRequest(game_id=game_id))
    assert view.view.connect4.moves == "4" and await seats.redis.zscore(live_key(), game_id) is not None


def test_the_current_line_leaves_out_what_take_backs_undid() -> None:
    def move(version: int, seat: int) -> games_pb2.RecordedAction:
        return games_pb2.RecordedAction(version=version, seat=seat, move=games_pb2.GameMove())

    def back(version: int, to: int) -> games_pb2.RecordedAction:
        return games_pb2.RecordedAction(version=version, seat=1, taken_back_to=to)

    # 1-4 moves; 5 takes back to 2; 6, 7 moves; 8 takes back to 6 (after the first take-back).
    actions = [move(1, 0), move(2, 1), move(3, 0), move(4, 1), back(5, 2), move(6, 0), move(7, 1), back(8, 6)]
    assert [a.version for a in current_line(actions)] == [1, 2, 6]
    assert [a.version for a in current_line([*actions, back(9, 0)])] == []
    assert [a.version for a in current_line([*actions, back(9, 3)])] == [1, 2, 3], "an undone line's version"
