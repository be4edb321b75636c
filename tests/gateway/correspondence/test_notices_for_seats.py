"""Who is told what after an action of a correspondence game of three seats (gateway/correspondence.py
on a real Redis, a counting inbox in place of gateway/notices): YOUR_TURN to whoever is to act,
OPPONENT_MOVED to the others, nothing to the mover (nor to a player holding the mover's seat too),
GAME_OVER to every seat; the same action followed up again (a replayed answer) gives the same
ids. The two-seat game end to end is test_correspondence_e2e.py."""

from __future__ import annotations

from tafel.games.v1 import games_pb2
from tafel.play.v1 import notices_pb2
from tafel.rules.v1 import rules_pb2

from gateway.clocks import Clocks
from gateway.correspondence import Correspondence
from gateway.games import GameDirectory, GameMeta
from gateway.rules import RulesRouter
from gateway.vacation.store import VacationStore
from kit.redis.layer import RedisLayer
from tests.gateway.harness import c4_move, new_id

N = notices_pb2


class Recording:
    def __init__(self) -> None:
        self.notes: dict[str, notices_pb2.Notification] = {}
        self.sent: list[tuple[str, str]] = []

    async def notify(self, player_id: str, note: notices_pb2.Notification, *, guest: bool = False) -> bool:
        assert not guest, "these seats are accounts: their inbox must not expire like a guest's"
        key = f"{player_id}/{note.notification_id}"
        self.sent.append((player_id, N.NotificationKind.Name(note.kind).removeprefix("NOTIFICATION_KIND_")))
        new = key not in self.notes
        self.notes[key] = note
        return new


def meta(players: tuple[str, ...]) -> GameMeta:
    return GameMeta(
        game_id=new_id("g"),
        game="colour-square",
        players=tuple((p, p.upper(), False) for p in players),
        options=b"",
        per_move_s=2 * 86_400.0,
        rated=False,
        origin="test",
        created_at=0.0,
    )


def follow(layer: RedisLayer, inbox: Recording) -> Correspondence:
    clocks = Clocks(layer, ttl_s=600)
    directory = GameDirectory(layer, RulesRouter({}), clocks, game_ttl_s=600)
    return Correspondence(layer, directory, VacationStore(layer, allowance_ms=30 * 86_400_000), inbox)


async def test_three_seats_after_a_move_and_at_the_end(layer: RedisLayer) -> None:
    inbox = Recording()
    corr = follow(layer, inbox)
    game = meta(("ann", "bob", "cas"))
    move = rules_pb2.ApplyMoveRequest(game_id=game.game_id, seat=0, move=c4_move(1))
    await corr.after_action(game, move, games_pb2.GameStatus(version=1, to_act=[1]))
    assert inbox.sent == [("bob", "YOUR_TURN"), ("cas", "OPPONENT_MOVED")]
    told = inbox.notes[f"cas/moved:{game.game_id}:1:2"]
    assert told.player.player_id == "ann" and told.game_id == game.game_id and told.seat == 2
    # The same action followed up again (a replayed answer, another gateway): the same ids.
    await corr.after_action(game, move, games_pb2.GameStatus(version=1, to_act=[1]))
    assert len(inbox.notes) == 2
    # A resignation is no move: the next player is told it is their turn, nobody that someone moved.
    inbox.sent.clear()
    resign = rules_pb2.ApplyMoveRequest(game_id=game.game_id, seat=1, resignation=rules_pb2.Resignation())
    await corr.after_action(game, resign, games_pb2.GameStatus(version=2, to_act=[2]))
    assert inbox.sent == [("cas", "YOUR_TURN")]
    inbox.sent.clear()
    over = games_pb2.GameStatus(version=3, over=True, outcome=games_pb2.Outcome(ranks=[1, 2, 1], reason="RESIGNED"))
    await corr.after_action(game, resign, over)
    assert inbox.sent == [("ann", "GAME_OVER"), ("bob", "GAME_OVER"), ("cas", "GAME_OVER")]
    assert inbox.notes[f"bob/over:{game.game_id}:1"].outcome.reason == "RESIGNED"


async def test_a_player_holding_two_seats_is_not_told_of_their_own_move(layer: RedisLayer) -> None:
    inbox = Recording()
    corr = follow(layer, inbox)
    game = meta(("ann", "ann", "bob"))
    move = rules_pb2.ApplyMoveRequest(game_id=game.game_id, seat=0, move=c4_move(1))
    await corr.after_action(game, move, games_pb2.GameStatus(version=1, to_act=[1]))
    assert inbox.sent == [("bob", "OPPONENT_MOVED")]
