"""Rating pools and personal-best boards come from the games' descriptions: a game the gateway has
never heard of, described by its rules service, is rated and listed with no gateway change."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import grpc
import pytest
from tafel.games.v1 import games_pb2
from tafel.play.v1 import play_pb2
from tafel.rules.v1 import rules_pb2

from gateway.ratings.book import RatingBook
from gateway.ratings.pools import RatingPools, boards_of, pools_of
from kit.errors import Refused
from kit.redis.client import redis_client
from kit.redis.layer import RedisLayer
from tests.gateway.local_games import local_catalogue
from tests.keyspace import emptied

T0 = 1_700_000_000_000


def new_game(**fields: object) -> rules_pb2.DescribeGameResponse:
    """A game that is in no catalogue and that the gateway's code has never named."""
    described = rules_pb2.DescribeGameResponse(game="hexfive", title="Hex Five", min_seats=1, max_seats=4)
    described.options.add(name="level").choice.CopyFrom(
        rules_pb2.Choices(choices=["easy", "hard"], default_value="easy")
    )
    for name, value in fields.items():
        if name == "rating_pools":
            described.rating_pools.extend(value)  # type: ignore[arg-type]
        else:
            getattr(described, name).CopyFrom(value)
    return described


@pytest.fixture
async def layer(redis_url: str) -> AsyncIterator[RedisLayer]:
    client = redis_client(emptied(redis_url, "ratings"))  # a cluster's too (tests/keyspace.py)
    opened = RedisLayer.around(client)
    try:
        yield opened
    finally:
        await opened.close()
        await client.aclose()


def record(game: str, names: list[str], ranks: list[int], scores: list[int] | None = None) -> play_pb2.GameRecord:
    out = play_pb2.GameRecord(
        game_id=uuid.uuid4().hex[:12],
        game=game,
        players=[
            play_pb2.SeatedPlayer(seat=i, player=play_pb2.Player(player_id=f"id-{n}", username=n))
            for i, n in enumerate(names)
        ],
        outcome=games_pb2.Outcome(ranks=ranks, scores=scores or []),
        rated=True,
    )
    out.ended_at.FromMilliseconds(T0)
    return out


def test_a_game_listing_no_pools_gets_one_named_after_it() -> None:
    (pool,) = pools_of(new_game())
    assert (pool.name, pool.game, pool.title, pool.min_seats, pool.max_seats) == (
        "hexfive",
        "hexfive",
        "Hex Five",
        2,
        4,
    )
    assert boards_of(new_game()) is None
    solo_only = rules_pb2.DescribeGameResponse(game="patience", title="Patience", min_seats=1, max_seats=1)
    assert pools_of(solo_only) == ()


def test_described_pools_and_boards_are_taken_as_they_are() -> None:
    described = new_game(
        rating_pools=[rules_pb2.RatingPool(name="hexfive-duel", title="duels", min_seats=2, max_seats=2)],
        personal_bests=rules_pb2.PersonalBests(name="hexfive-solo", board_option="level"),
    )
    assert [p.name for p in pools_of(described)] == ["hexfive-duel"]
    boards = boards_of(described)
    assert boards is not None and boards.choices == ("easy", "hard") and boards.default == "easy"
    # A record without the game's options counts on the default board.
    assert boards.board_of(games_pb2.GameOptions()) == "easy"


async def test_a_new_game_is_rated_listed_and_kept_without_gateway_code(layer: RedisLayer) -> None:
    described = new_game(
        rating_pools=[
            rules_pb2.RatingPool(name="hexfive", title="Hex Five tables", min_seats=3, max_seats=4),
            rules_pb2.RatingPool(name="hexfive-duel", title="Hex Five duels", min_seats=2, max_seats=2),
        ],
        personal_bests=rules_pb2.PersonalBests(name="hexfive-solo", board_option="level"),
    )
    pools = RatingPools(local_catalogue(described))
    book = RatingBook(layer, pools)
    assert await book.apply_record(record("hexfive", ["a", "b", "c"], [1, 2, 3])) == "applied"
    assert await book.apply_record(record("hexfive", ["a", "b"], [2, 1])) == "applied"
    assert await book.apply_record(record("hexfive", ["a"], [1], scores=[17])) == "applied"
    listed = [(p.name, p.game, p.min_seats, p.max_seats) for p in await pools.listed()]
    assert listed[-2:] == [("hexfive", "hexfive", 3, 4), ("hexfive-duel", "hexfive", 2, 2)]
    entries, _, _, total = await book.leaderboard("hexfive", include_provisional=True, page_size=10, page_token="")
    assert total == 3 and [e.username for e in entries] == ["a", "b", "c"]
    assert {pool for pool, _, _ in await book.ratings_of("id-a")} == {"hexfive", "hexfive-duel"}
    assert await book.rating("id-a", "hexfive") == entries[0].stored.rating.rating  # the first pool
    assert [(b.sheet, b.score) for b in await book.bests_of("id-a")] == [("easy", 17)]
    # A board the game does not describe is refused, naming the ones it has.
    with pytest.raises(Refused) as refused:
        await book.personal_bests("Z", page_size=5, page_token="")
    assert refused.value.reason == "BAD_SHEET" and "A, B" in refused.value.message


class OneServiceDown:
    """The catalogue with one game's rules service not answering (as the router refuses then)."""

    def __init__(self, down: str) -> None:
        self.inner = local_catalogue()
        self.down = down

    @property
    def games(self) -> tuple[str, ...]:
        return self.inner.games

    def offers(self, game: str) -> bool:
        return self.inner.offers(game)

    async def describe(self, game: str, *, timeout_s: float | None = None) -> rules_pb2.DescribeGameResponse:
        if game == self.down:
            raise Refused(grpc.StatusCode.UNAVAILABLE, "RULES_UNAVAILABLE", "the game's rules service is unavailable")
        return await self.inner.describe(game)


async def test_a_game_whose_service_is_down_is_left_out_not_denied() -> None:
    down = next(iter(local_catalogue().games))
    pools = RatingPools(OneServiceDown(down))
    listed = [p.game for p in await pools.listed()]
    assert down not in listed and listed
    up = (await pools.listed())[0]
    assert await pools.named(up.name) == up
    # A leaderboard not found while a game is not answering may be that game's: UNAVAILABLE
    # (retry), not "there is no such leaderboard".
    with pytest.raises(Refused) as refused:
        await pools.named(down)
    assert refused.value.code is grpc.StatusCode.UNAVAILABLE
