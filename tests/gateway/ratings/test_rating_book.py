"""Ratings in Redis: exactly once per game end, leaderboards, personal bests, the crash sweeper."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator, Callable

import pytest
from redis.asyncio import Redis
from tafel.coloursquare.v1 import coloursquare_pb2
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2

from gateway.games import GameMeta
from gateway.ratings.book import RatingBook
from gateway.ratings.glicko2 import Rating, rate_table
from gateway.ratings.pools import RatingPools
from gateway.ratings.stored import Stored
from gateway.ratings.sweeper import RatingSweeper
from gateway.records import Records
from kit.errors import Refused
from kit.redis.client import redis_client
from kit.redis.keys import pool_key as key
from kit.redis.keys import rated_hint_key as hint_key
from kit.redis.layer import RedisLayer
from tests.gateway.local_games import local_catalogue
from tests.keyspace import emptied, with_db

T0 = 1_700_000_000_000


@pytest.fixture
async def db(redis_url: str) -> AsyncIterator[Redis]:
    client = redis_client(emptied(redis_url, "ratings"))  # a cluster's too (tests/keyspace.py)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def layers(db: Redis) -> AsyncIterator[list[RedisLayer]]:
    """The layers the test's books run on (one per "replica"), closed after the test."""
    opened: list[RedisLayer] = []
    yield opened
    for layer in opened:
        await layer.close()


BookOn = Callable[[Redis], RatingBook]


@pytest.fixture
def book_on(layers: list[RedisLayer]) -> BookOn:
    """A rating book over a client (its own pipelined connection), with the catalogue's pools."""
    pools = RatingPools(local_catalogue())

    def make(client: Redis) -> RatingBook:
        layers.append(RedisLayer.around(client))
        return RatingBook(layers[-1], pools)

    return make


def player(name: str, guest: bool = False) -> play_pb2.Player:
    return play_pb2.Player(player_id=f"id-{name}", username=name, guest=guest)


def record(
    players: list[play_pb2.Player],
    ranks: list[int],
    *,
    game: str = "connect4",
    rated: bool = True,
    ended_ms: int = T0,
    scores: list[int] | None = None,
    options: games_pb2.GameOptions | None = None,
    game_id: str | None = None,
) -> play_pb2.GameRecord:
    out = play_pb2.GameRecord(
        game_id=game_id or uuid.uuid4().hex[:12],
        game=game,
        players=[play_pb2.SeatedPlayer(seat=i, player=p) for i, p in enumerate(players)],
        outcome=games_pb2.Outcome(ranks=ranks, scores=scores or []),
        rated=rated,
    )
    if options is not None:
        out.options.CopyFrom(options)
    out.ended_at.FromMilliseconds(ended_ms)
    return out


async def test_same_game_end_applied_once(db: Redis, redis_url: str, book_on: BookOn) -> None:
    a, b = player("ann"), player("bob")
    game = record([a, b], [1, 2])
    book = book_on(db)
    assert await book.apply_record(game) == "applied"
    assert await book.apply_record(game) == "already"
    # Another replica (own connection) and a burst of concurrent repeats change nothing.
    other = redis_client(with_db(redis_url, "ratings"))
    try:
        results = await asyncio.gather(*(book_on(other).apply_record(game) for _ in range(5)))
    finally:
        await other.aclose()
    assert set(results) == {"already"}
    expect = rate_table([Rating(), Rating()], [1, 2])
    stored_a = await book.stored("connect4", a.player_id)
    stored_b = await book.stored("connect4", b.player_id)
    assert stored_a is not None and stored_b is not None
    assert stored_a.games == stored_b.games == 1
    assert stored_a.rating.rating == pytest.approx(expect[0].rating, abs=1e-5)
    assert stored_b.rating.rating == pytest.approx(expect[1].rating, abs=1e-5)
    assert await book.rating(a.player_id, "connect4") == pytest.approx(expect[0].rating, abs=1e-5)


async def test_concurrent_first_applications_apply_once(db: Redis, book_on: BookOn) -> None:
    a, b = player("cat"), player("dan")
    game = record([a, b], [1, 1])
    results = await asyncio.gather(*(book_on(db).apply_record(game) for _ in range(8)))
    assert sorted(results) == ["already"] * 7 + ["applied"]
    stored = await book_on(db).stored("connect4", a.player_id)
    assert stored is not None and stored.games == 1


async def test_two_games_of_one_player_ending_together_both_count(db: Redis, book_on: BookOn) -> None:
    a, b, c = player("eve"), player("fay"), player("gus")
    book = book_on(db)
    results = await asyncio.gather(book.apply_record(record([a, b], [1, 2])), book.apply_record(record([c, a], [1, 2])))
    assert results == ["applied", "applied"]
    stored = await book.stored("connect4", a.player_id)
    assert stored is not None and stored.games == 2


async def test_unrated_solo_and_self_play_change_nothing(db: Redis, book_on: BookOn) -> None:
    a, b = player("hal"), player("ida")
    book = book_on(db)
    assert await book.apply_record(record([a, b], [1, 2], rated=False)) == "skipped"
    assert await book.apply_record(record([a, a], [1, 2])) == "skipped"
    assert await book.stored("connect4", a.player_id) is None


async def test_pools_by_table_size(db: Redis, book_on: BookOn) -> None:
    people = [player(f"cs{i}") for i in range(4)]
    book = book_on(db)
    assert (
        await book.apply_record(record(people, [1, 2, 2, 4], game="coloursquare", scores=[30, 20, 20, 5])) == "applied"
    )
    assert await book.apply_record(record(people[:2], [2, 1], game="coloursquare")) == "applied"
    table = [await book.stored("coloursquare", p.player_id) for p in people]
    duel = await book.stored("coloursquare-duel", people[0].player_id)
    assert all(s is not None and s.games == 1 for s in table) and duel is not None and duel.games == 1
    assert table[0] is not None and table[3] is not None and table[0].rating.rating > 1500 > table[3].rating.rating
    assert duel.rating.rating < 1500
    # Matchmaking reads the table pool for Colour Square.
    assert await book.rating(people[0].player_id, "coloursquare") == table[0].rating.rating
    names = {pool for pool, _, _ in await book.ratings_of(people[0].player_id)}
    assert names == {"coloursquare", "coloursquare-duel"}


async def test_rd_grows_with_time_away(db: Redis, book_on: BookOn) -> None:
    a, b = player("jo"), player("kim")
    book = book_on(db)
    await book.apply_record(record([a, b], [1, 2], ended_ms=T0))
    first = await book.stored("connect4", a.player_id)
    await book.apply_record(record([a, b], [1, 2], ended_ms=T0 + 1000))
    soon = await book.stored("connect4", a.player_id)
    await book.apply_record(record([a, b], [2, 1], ended_ms=T0 + 400 * 86_400_000))
    later = await book.stored("connect4", a.player_id)
    assert first is not None and soon is not None and later is not None
    assert soon.rating.rd < first.rating.rd
    assert later.games == 3 and later.last_ms == T0 + 400 * 86_400_000


async def test_leaderboard_pages_and_own_rank(db: Redis, book_on: BookOn) -> None:
    book = book_on(db)
    people = [player(f"lb{i:02d}") for i in range(12)]
    guest = player("guest-x", guest=True)
    # Everyone plays everyone once; lower index wins. Many games: some leave provisional.
    for round_ in range(3):
        for i, p in enumerate(people):
            for q in people[i + 1 :]:
                await book.apply_record(record([p, q], [1, 2], ended_ms=T0 + round_))
    await book.apply_record(record([people[0], guest], [1, 2]))
    entries, token, mine, total = await book.leaderboard(
        "connect4", include_provisional=True, page_size=5, page_token="", me=people[7].player_id
    )
    assert total == 12, "guests are never listed"
    assert [e.player_id for e in entries] == [p.player_id for p in people[:5]]
    assert [e.rank for e in entries] == [1, 2, 3, 4, 5] and entries[0].username == "lb00"
    assert mine is not None and mine.rank == 8 and mine.player_id == people[7].player_id
    page2, token2, _, _ = await book.leaderboard("connect4", include_provisional=True, page_size=5, page_token=token)
    page3, token3, _, _ = await book.leaderboard("connect4", include_provisional=True, page_size=5, page_token=token2)
    assert [e.rank for e in page2] == [6, 7, 8, 9, 10] and [e.rank for e in page3] == [11, 12] and token3 == ""
    established, _, _, count = await book.leaderboard(
        "connect4", include_provisional=False, page_size=100, page_token=""
    )
    assert all(not e.stored.rating.provisional() for e in established) and count == len(established)
    ratings = [e.stored.rating.rating for e in entries + page2 + page3]
    assert ratings == sorted(ratings, reverse=True)
    with pytest.raises(Refused):
        await book.leaderboard("connect4", include_provisional=False, page_size=5, page_token=token)  # other listing
    with pytest.raises(Refused):
        await book.leaderboard("chess", include_provisional=False, page_size=5, page_token="")


def solo(p: play_pb2.Player, score: int, side: str = "A", ended_ms: int = T0) -> play_pb2.GameRecord:
    options = games_pb2.GameOptions(coloursquare=coloursquare_pb2.Options(side=side))
    return record([p], [1], game="coloursquare", rated=False, scores=[score], options=options, ended_ms=ended_ms)


async def test_personal_bests_per_sheet(db: Redis, book_on: BookOn) -> None:
    book = book_on(db)
    a, b, g = player("pb-a"), player("pb-b"), player("guest-pb", guest=True)
    first = solo(a, 40)
    assert await book.apply_record(first) == "applied"
    assert await book.apply_record(solo(a, 35)) == "already"
    assert await book.apply_record(first) == "already"
    best = solo(a, 52, ended_ms=T0 + 5)
    await book.apply_record(best)
    await book.apply_record(solo(b, 45))
    await book.apply_record(solo(b, 70, side="B"))
    assert await book.apply_record(solo(g, 99)) == "skipped"
    bests, token, mine, total = await book.personal_bests("A", page_size=10, page_token="", me=b.player_id)
    assert [(x.player_id, x.score, x.rank) for x in bests] == [(a.player_id, 52, 1), (b.player_id, 45, 2)]
    assert bests[0].game_id == best.game_id and bests[0].achieved_ms == T0 + 5
    assert mine is not None and mine.rank == 2 and total == 2 and token == ""
    assert [(x.sheet, x.score) for x in await book.bests_of(b.player_id)] == [("A", 45), ("B", 70)]


class NoActions:
    async def read_actions(self, game_id: str) -> list[bytes]:
        return []


def ended_game(game_id: str, game: str, a: play_pb2.Player, b: play_pb2.Player, *, rated: bool = True) -> GameMeta:
    """A two-player game's metadata as a record is written from (`a` is a bot in an unrated one)."""
    return GameMeta(
        game_id=game_id,
        game=game,
        players=((a.player_id, a.username, not rated), (b.player_id, b.username, False)),
        options=b"",
        per_move_s=60,
        rated=rated,
        origin="test",
        created_at=T0 / 1000,
    )


async def test_crash_between_record_and_update_is_swept(db: Redis, book_on: BookOn) -> None:
    a, b = player("sw-a"), player("sw-b")
    records = Records(RedisLayer.around(db), NoActions())  # type: ignore[arg-type]
    meta = ended_game("swept-1", "connect4", a, b)
    # The "crash": the record is written with no hook attached.
    written = await records.write(meta, games_pb2.Outcome(ranks=[2, 1]))
    book = book_on(db)
    assert await book.stored("connect4", a.player_id) is None
    sweeper = RatingSweeper(book, interval_s=1, lag_s=60)
    now = int(written.ended_at.ToMilliseconds())
    assert await sweeper.sweep_once(now_ms=now) == 1
    assert await db.exists(hint_key("swept-1"))
    stored = await book.stored("connect4", b.player_id)
    assert stored is not None and stored.games == 1 and stored.rating.rating > 1500
    assert await sweeper.sweep_once(now_ms=now + 1000) == 0
    # Even without the hint (expired), the applied marker holds.
    await db.delete(hint_key("swept-1"))
    assert await sweeper.sweep_once(now_ms=now + 2000) == 0
    stored = await book.stored("connect4", b.player_id)
    assert stored is not None and stored.games == 1


async def test_hook_on_records_applies_and_hints(db: Redis, book_on: BookOn) -> None:
    a, b = player("hk-a"), player("hk-b")
    records = Records(RedisLayer.around(db), NoActions())  # type: ignore[arg-type]
    book = book_on(db)
    records.hooks.append(book.on_record)
    meta = ended_game("hooked-1", "plus4", a, b)
    await records.write(meta, games_pb2.Outcome(ranks=[1, 2]))
    await records.write(meta, games_pb2.Outcome(ranks=[1, 2]))  # a second replica sees the same end
    stored = await book.stored("plus4", a.player_id)
    assert stored is not None and stored.games == 1
    assert await db.exists(hint_key("hooked-1")) and await db.exists(key("plus4", "applied:hooked-1"))


async def test_an_unrated_games_hint_is_stored_with_its_record(db: Redis, book_on: BookOn) -> None:
    """Attached, the book stores an unrated game's hint with its record (the sweep passes it by)
    and its hook sends nothing; a rated game's hook applies it and hints after."""
    a, b = player("un-a"), player("un-b")
    records = Records(RedisLayer.around(db), NoActions())  # type: ignore[arg-type]
    book = book_on(db)
    book.attach(records)
    sent: list[tuple[object, ...]] = []
    real_call = book.redis.call

    async def call(*command: str | bytes | int | float) -> object:
        sent.append(command)
        return await real_call(*command)

    book.redis.call = call  # type: ignore[method-assign]
    meta = ended_game("unrated-1", "connect4", a, b, rated=False)
    await records.write(meta, games_pb2.Outcome(ranks=[1, 2]))
    assert await db.exists(hint_key("unrated-1")) and sent == []
    assert await book.stored("connect4", b.player_id) is None
    rated = dataclasses.replace(meta, game_id="rated-1", rated=True)
    await records.write(rated, games_pb2.Outcome(ranks=[1, 2]))
    assert await db.exists(hint_key("rated-1")) and sent[-1][:2] == ("SET", hint_key("rated-1"))
    stored = await book.stored("connect4", b.player_id)
    assert stored is not None and stored.games == 1


def test_stored_round_trip() -> None:
    s = Stored(Rating(1612.5, 88.25, 0.0601), 7, T0)
    assert Stored.decode(s.encode()) == s
    assert Stored.decode(b"junk") is None
