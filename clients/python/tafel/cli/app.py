"""The live game screen (Textual): the board in colour, updated as events arrive; keys to move, to
offer or accept a draw (d), ask for or allow a takeback (u), decline an offer (n) and, after the
game, offer or accept a rematch (m), which opens the new game when everyone has accepted. Under
the board the game's chat as it comes (the players' channel for a player, the spectators' for a
watcher); `/` opens a line to say something, Enter sends it, Escape closes it."""

from __future__ import annotations

import time
from datetime import UTC

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Input, RichLog, Static

from tafel.by_game import REGISTRY, GameClient
from tafel.cli.boards import Cursor, Seating, columns_of, render
from tafel.cli.describe import describe, game_title, outcome_text, seat_names
from tafel.cli.shared import BACK, LOST, sentence, translate_bindings
from tafel.cli.words import offer_word
from tafel.client import TafelClient
from tafel.errors import AlreadyExists, IllegalMove, TafelError
from tafel.i18n import N_, _, clock_time
from tafel.names import player_name
from tafel.play.v1 import play_pb2, social_pb2

CONFIRM_S = 5.0  # a second q / x within this long confirms
# Actions a spectator cannot take: hidden from the footer and ignored.
PLAYER_ACTIONS = {
    "cursor",
    "row",
    "colour",
    "column",
    "submit",
    "bonus",
    "die",
    "joker",
    "send_placements",
    "clear",
    "resign",
    "offer",
    "decline",
}
# What the keys of the offers say in the log ("d to accept"), by kind.
OFFER_KEYS = {play_pb2.OFFER_KIND_DRAW: "d", play_pb2.OFFER_KIND_TAKEBACK: "u", play_pb2.OFFER_KIND_REMATCH: "m"}
# Keys some game uses (tafel/by_game/<game>.py `actions`): hidden where the game played has no use for them.
GAME_ACTIONS = frozenset().union(*(module.actions for module in REGISTRY.values()))


class EventLog(RichLog):
    """The event log never takes focus: the arrow keys belong to the board."""

    can_focus = False


class ChatLog(RichLog):
    """The game's chat lines; never takes focus either."""

    can_focus = False


def clock_text(seconds: float) -> str:
    """ "0:42", "12:05"; from an hour on "5 h 12 min", from a day on "2 d 5 h" (correspondence)."""
    seconds = max(0, int(seconds))
    if seconds >= 86400:
        return _("{days} d {hours} h").format(days=seconds // 86400, hours=seconds % 86400 // 3600)
    if seconds >= 3600:
        return _("{hours} h {minutes} min").format(hours=seconds // 3600, minutes=seconds % 3600 // 60)
    return f"{seconds // 60}:{seconds % 60:02d}"


class GameApp(App[str]):
    """Plays (or watches, when `seat` is None) one game. Returns the result line on exit."""

    ENABLE_COMMAND_PALETTE = False  # its key hint crowded out the footer's own keys

    CSS = """
    #board { height: auto; padding: 0 1; }
    #status { height: 2; padding: 0 2; }
    EventLog { height: 1fr; min-height: 4; border: round $accent; }
    ChatLog { height: 1fr; min-height: 5; border: round $secondary; }
    #say { display: none; }
    """
    # Priority bindings: the keys reach the board whatever widget has focus.
    # Every binding is a priority one: the keys reach the board whatever widget has focus, and in the
    # order typed (a priority key would otherwise overtake a plain one still bubbling up).
    # The footer's words are marked here and said in the player's language when the screen is made
    # (__init__: the class is defined before the language is chosen).
    KEYS = (
        ("left", "cursor(-1)", N_("column/square"), True),
        ("right", "cursor(1)", N_("column/square"), False),
        ("up", "row(-1)", N_("row"), True),
        ("down", "row(1)", N_("row"), False),
        ("t", "colour", N_("white's cell"), False),
        ("enter", "submit", N_("move/place"), True),
        ("space", "submit", N_("move"), False),
        ("b", "bonus", N_("bonus disc"), False),  # (the blue die in Colour Square) the board says so
        ("r", "die(0)", "", False),
        ("y", "die(1)", "", False),
        ("g", "die(2)", "", False),
        ("w", "die(4)", "", False),
        ("j", "joker", N_("joker"), True),
        ("p", "send_placements", N_("send/pass"), True),
        ("c", "clear", N_("clear"), False),
        ("x", "resign", N_("resign"), True),
        ("d", "offer('draw')", N_("draw"), True),
        ("u", "offer('takeback')", N_("take back"), False),
        ("m", "offer('rematch')", N_("rematch"), True),
        ("n", "decline", N_("no"), False),
        ("slash", "chat", N_("chat"), True),
        ("q", "quit", N_("quit"), True),
        ("escape", "cancel", "", False),
        *((str(n), f"column({n - 1})", "", False) for n in range(1, 10)),
    )
    BINDINGS = [Binding(key, action, description, show=show, priority=True) for key, action, description, show in KEYS]

    def __init__(self, client: TafelClient, game_id: str, seat: int | None, title: str, *, public: bool = True) -> None:
        super().__init__()
        translate_bindings(self)
        self.public = public
        self.client = client
        self.game_id = game_id
        self.seat = seat
        self.title = title
        self.cursor = Cursor()
        self.seating = Seating()
        self.state: play_pb2.GetGameResponse | None = None
        self.deadline: float | None = None
        self.result = ""
        self.confirm: tuple[str, float] | None = None  # ("quit" | "resign", when asked)
        self.reconnecting = False  # the game's events are lost until the watch is live again
        self.offers: dict[int, play_pb2.Offer] = {}  # pending offers in this game, by kind
        self.next_game = ""  # a rematch that started: the caller opens it after this screen
        # A player talks in the game's players' channel, a watcher in its spectators'.
        kind = (
            social_pb2.CHAT_CHANNEL_KIND_GAME_PLAYERS
            if seat is not None
            else social_pb2.CHAT_CHANNEL_KIND_GAME_SPECTATORS
        )
        self.chat_channel = social_pb2.ChatChannel(kind=kind, id=game_id)
        self.typing = False  # the chat line is open: every key but Escape goes to it

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="board")
        yield Static(id="status")
        yield ChatLog(id="chat", markup=False, wrap=True)
        line = Input(id="say", placeholder=_("say something (Enter sends, Escape closes)"), max_length=500)
        # Focusable only while open: a focused line takes every printable key (d, x, q ...) from
        # the board's bindings, and Textual focuses the first focusable widget on mount.
        line.can_focus = False
        yield line
        yield EventLog(id="log", markup=False, wrap=True)
        yield Footer()

    async def on_mount(self) -> None:
        self.sub_title = _("game {game_id}").format(game_id=self.game_id)
        if self.seat is None or self.public:
            self.say(_("Game {game_id} (to watch it: `tafel watch {game_id}`).").format(game_id=self.game_id))
        else:
            self.say(
                _("Game {game_id}: a private room's game, only its players see it (--watchable opens it).").format(
                    game_id=self.game_id
                )
            )
        await self.refresh_game()
        self.run_worker(self.follow(), exclusive=True)
        if self.seat is not None:
            self.run_worker(self.follow_offers())
        self.query_one(ChatLog).border_title = self.chat_title(_("(/ to say something)"))
        self.run_worker(self.follow_chat())
        self.set_interval(0.5, self.show_status)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Spectators get no moving or resigning keys; each game shows only its own keys. While
        the chat line is open the keys are its own (Escape closes it)."""
        if self.typing:
            return action == "cancel"
        if action in PLAYER_ACTIONS and self.seat is None:
            return False
        if action in GAME_ACTIONS and (self.module is None or action not in self.module.actions):
            return False
        if action == "offer" and parameters:
            over = self.state is not None and self.state.summary.status.over
            # A rematch after the game; a draw or takeback during it.
            return over == (parameters[0] == "rematch")
        return True

    @property
    def game(self) -> str:
        return (self.state.view.WhichOneof("game") or "") if self.state is not None else ""

    @property
    def module(self) -> GameClient | None:
        """What this client knows of the game played (None: a game it does not know)."""
        return REGISTRY.get(self.game)

    @property
    def own_view(self) -> object:
        """The game's own View (the GameView union's field)."""
        assert self.state is not None
        return getattr(self.state.view, self.game)

    async def follow(self) -> None:
        # No retry limit: the screen waits for the platform as long as the person does (q leaves).
        watch = self.client.watch_with_deadlines(
            self.game_id, "", stop_at_end=True, max_retries=None, on_connection=self.connection
        )
        try:
            async for response in watch:
                event = response.event
                self.say(describe(event, self.seating.names))
                kind = event.WhichOneof("kind") or ""
                if kind in REGISTRY:
                    REGISTRY[kind].seen(getattr(event, kind), self.seating)
                self.deadline = _seconds(response) if response.HasField("turn_deadline") else None
                await self.refresh_game()
        except TafelError as error:
            self.say(_("Lost the game: {reason}. Press q to quit.").format(reason=sentence(error)))

    async def connection(self, up: bool) -> None:
        """The watch lost (False) or live again (True): say so, and once back show the game as the
        server has it (moves made meanwhile, whose turn it is, the version a move is made against)."""
        if up == (not self.reconnecting):
            return
        self.reconnecting = not up
        if up:
            self.say(_(BACK))
            await self.refresh_game()
        else:
            self.say(_(LOST))
            self.show_status()

    async def refresh_game(self) -> None:
        was_over = self.state is not None and self.state.summary.status.over
        try:
            self.state = await self.client.get_game(self.game_id)
        except TafelError as error:
            if not self.reconnecting:  # while reconnecting the status line already says why
                self.say(_("Could not read the game: {reason}.").format(reason=sentence(error)))
            return
        summary = self.state.summary
        self.seating.names = seat_names(summary.players, self.seat)
        self.seating.to_act = set(summary.status.to_act)
        per_move = summary.time_control.per_move.seconds
        self.seating.per_move = _("({clock} a move)").format(clock=clock_text(per_move)) if per_move else ""
        if summary.HasField("turn_deadline"):
            self.deadline = summary.turn_deadline.seconds + summary.turn_deadline.nanos / 1e9
        if summary.status.over:
            self.deadline = None
            self.result = outcome_text(summary.status.outcome, self.seating.names)
        if summary.status.over != was_over:
            self.refresh_bindings()  # the footer: a rematch after the game, a draw during it
        self._keep_cursor_legal()
        self.show_status()

    def _keep_cursor_legal(self) -> None:
        """The cursor follows the view: no bonus disc once it is used, the right die for the role."""
        assert self.state is not None
        if self.module is not None and self.seat is not None:
            self.module.follow_view(self.own_view, self.cursor, self.seat)

    def show_status(self) -> None:
        """The status line, and the board again: its clocks count down."""
        if self.state is None:
            return
        status = self.state.summary.status
        left = clock_text(self.deadline - time.time()) if self.deadline else ""
        self.seating.clock = left
        theirs = [o for o in self.offers.values() if o.by.seat != self.seat and self.seat is not None]
        if status.over:
            line = _("GAME OVER — {result}.  Press q to quit.").format(result=self.result)
            if self.seat is not None:
                line = _("GAME OVER — {result}.  Press q to quit, m to offer a rematch.").format(result=self.result)
            if any(o.kind == play_pb2.OFFER_KIND_REMATCH for o in theirs):
                line += "  " + _("A rematch is offered: m accepts, n declines.")
        elif self.reconnecting:
            line = _("Reconnecting… the game server is not answering; your game is kept. Wait, or press q to leave.")
        elif self.confirm is not None and time.monotonic() - self.confirm[1] < CONFIRM_S:
            line = (
                _("The game goes on without you and your clock keeps running: press q again to leave.")
                if self.confirm[0] == "quit"
                else _("Resign this game? Press x again to resign.")
            )
        else:
            waiting = ", ".join(self.seating.name(s) for s in status.to_act if s != self.seat)
            if self.seat in status.to_act:
                line = _("YOUR TURN")
            elif self.seat is None:
                line = _("watching · to move: {names}").format(names=waiting)
            else:
                line = _("waiting for {names}").format(names=waiting)
            line += ("   " + _("clock: {left}").format(left=left)) if left else ""
            away = [self.seating.name(s) for s in status.to_act if s in self.state.summary.vacation_seats]
            if away:  # their clock stands still (the deadline moves on while they are away)
                line += "   " + _("on vacation: {names}").format(names=", ".join(away))
            for offer in theirs:
                key = OFFER_KEYS.get(offer.kind, "")
                line += "   " + _("{offer} offered: {key} accepts, n declines").format(
                    offer=offer_word(offer.kind), key=key
                )
        self.query_one("#status", Static).update(line)
        self._redraw()

    def say(self, message: str) -> None:
        self.query_one(EventLog).write(message)

    # -- keys -----------------------------------------------------------------------------------------

    def _redraw(self) -> None:
        self.seating.width = self.size.width
        if self.state is not None:
            self.query_one("#board", Static).update(render(self.state.view, self.cursor, self.seat, self.seating))

    def action_cursor(self, step: int) -> None:
        if self.state is None:
            return
        self.cursor.column = (self.cursor.column + step) % columns_of(self.state.view)
        self._redraw()

    def action_row(self, step: int) -> None:
        self.cursor.row = (self.cursor.row + step) % 4
        self._redraw()

    def action_colour(self) -> None:
        self.cursor.colour = (self.cursor.colour + 1) % 4
        self._redraw()

    def action_column(self, column: int) -> None:
        if self.state is not None and column < columns_of(self.state.view):
            self.cursor.column = column
            self._redraw()

    def action_bonus(self) -> None:
        if self.module is not None:
            self.module.press_b(self.cursor)
            if self.state is not None:
                self._keep_cursor_legal()
        self._redraw()

    def action_die(self, die: int) -> None:
        self.cursor.die = die
        self._redraw()

    def action_clear(self) -> None:
        self.cursor.placements.clear()
        self._redraw()

    def action_joker(self) -> None:
        if self.state is None or self.seat is None or self.module is None:
            return
        self.module.joker(self.own_view, self.cursor, self.seat, self.say)
        self._redraw()

    async def action_submit(self) -> None:
        if self.state is None or self.seat is None or self.module is None:
            return
        module = self.module
        move = module.submit(self.own_view, self.cursor, self.seat, self.say)
        if move is None:  # a part of a move gathered (sent with the others later)
            self._redraw()
            return
        if await self._send(move):
            module.moved(self.cursor)

    async def action_send_placements(self) -> None:
        if self.state is None or self.module is None:
            return
        move = self.module.send_parts(self.cursor)
        if move is not None:
            await self._send(move)

    async def _send(self, move: object) -> bool:
        assert self.state is not None
        if self.reconnecting:
            self.say(_("Not sent: the game server is not answering. Move again once it is back."))
            return False
        try:
            answer = await self.client.submit_move(
                self.game_id,
                move,  # type: ignore[arg-type]
                expected_version=self.state.summary.status.version,
            )
        except TafelError as error:
            self.say(_("Move refused: {reason}.").format(reason=sentence(error)))
            await self.refresh_game()
            return False
        # Whose turn it is now, at once: the move's own event may come later (or, with the
        # connection gone, only after a reconnect), and the screen must not say YOUR TURN till then.
        status = self.state.summary.status
        if answer.HasField("status") and answer.status.version >= status.version:
            status.CopyFrom(answer.status)
            self.seating.to_act = set(status.to_act)
            self.show_status()
        return True

    def _confirmed(self, what: str) -> bool:
        """True on the second press within CONFIRM_S; the first press asks."""
        if self.confirm is not None and self.confirm[0] == what and time.monotonic() - self.confirm[1] < CONFIRM_S:
            self.confirm = None
            return True
        self.confirm = (what, time.monotonic())
        self.show_status()
        return False

    async def action_resign(self) -> None:
        if self.seat is None or self.state is None or self.state.summary.status.over:
            return
        if not self._confirmed("resign"):
            return
        try:
            await self.client.resign(self.game_id)
        except TafelError as error:
            self.say(_("Resign refused: {reason}.").format(reason=sentence(error)))

    # -- offers: draw, takeback, rematch ----------------------------------------------------------------

    async def follow_offers(self) -> None:
        """The account's event stream, for this game's offers and the start of its rematch."""
        try:
            async with self.client.event_stream(max_retries=None) as events:
                async for event in events:
                    kind = event.WhichOneof("kind")
                    if kind == "offer" and event.offer.game_id == self.game_id:
                        self.on_offer(event.offer)
                    elif kind == "game_started" and event.game_started.origin == f"rematch:{self.game_id}":
                        self.next_game = event.game_started.game_id
                        self.exit(self.result or _("a rematch"))
                        return
        except TafelError as error:
            self.say(_("Offers cannot be followed now: {reason}.").format(reason=sentence(error)))

    def _offerer(self, offer: play_pb2.Offer) -> str:
        return self.seating.name(offer.by.seat)

    def on_offer(self, offer: play_pb2.Offer) -> None:
        what = offer_word(offer.kind)
        mine = offer.by.seat == self.seat
        if offer.status == play_pb2.OFFER_STATUS_PENDING:
            self.offers[offer.kind] = offer
            if not mine:
                key = OFFER_KEYS.get(offer.kind, "")
                ask = {
                    play_pb2.OFFER_KIND_DRAW: _("{name} offers a draw: press {key} to accept, n to decline."),
                    play_pb2.OFFER_KIND_TAKEBACK: _(
                        "{name} asks to take back their last move: press {key} to accept, n to decline."
                    ),
                    play_pb2.OFFER_KIND_REMATCH: _("{name} offers a rematch: press {key} to accept, n to decline."),
                }.get(offer.kind, _("{name} makes an offer: press {key} to accept, n to decline."))
                self.say(ask.format(name=self._offerer(offer), key=key))
            self.show_status()
            return
        self.offers.pop(offer.kind, None)
        if offer.status == play_pb2.OFFER_STATUS_ACCEPTED:
            self.say(
                {
                    play_pb2.OFFER_KIND_DRAW: _("The draw is agreed."),
                    play_pb2.OFFER_KIND_TAKEBACK: _("The takeback is agreed: the move is taken back."),
                    play_pb2.OFFER_KIND_REMATCH: _("The rematch is agreed: it starts now."),
                }.get(offer.kind, _("Agreed."))
            )
        elif offer.status == play_pb2.OFFER_STATUS_DECLINED and offer.HasField("declined_by"):
            if offer.declined_by != self.seat:
                who = self.seating.name(offer.declined_by)
                if mine:
                    self.say(_("{name} declined your {offer} offer.").format(name=who, offer=what))
                else:
                    self.say(
                        _("{name} declined {offerer}'s {offer} offer.").format(
                            name=who, offerer=self._offerer(offer), offer=what
                        )
                    )
        elif offer.status == play_pb2.OFFER_STATUS_WITHDRAWN and not mine:
            self.say(_("{name}'s {offer} offer is off.").format(name=self._offerer(offer), offer=what))
        elif offer.status == play_pb2.OFFER_STATUS_EXPIRED:
            self.say(_("The {offer} offer expired.").format(offer=what))
        self.show_status()

    async def action_offer(self, kind: str) -> None:
        """Offer (or ask for) `kind`; when the other side has offered it already, accept theirs."""
        if self.seat is None or self.state is None:
            return
        code = {"draw": play_pb2.OFFER_KIND_DRAW, "takeback": play_pb2.OFFER_KIND_TAKEBACK}.get(
            kind, play_pb2.OFFER_KIND_REMATCH
        )
        theirs = self.offers.get(code)
        try:
            if theirs is not None and theirs.by.seat != self.seat:
                await self.client.answer_offer(self.game_id, kind, True, seat=self.seat)
                return  # the answer's event says what came of it
            try:
                await self.client.make_offer(self.game_id, kind, seat=self.seat)
            except AlreadyExists:
                # One is pending that this screen has not seen (made before it opened): accept it.
                await self.client.answer_offer(self.game_id, kind, True, seat=self.seat)
                return
            others = ", ".join(self.seating.name(s) for s in range(len(self.seating.names)) if s != self.seat)
            asked = {
                "draw": _("You offered a draw; waiting for {names}."),
                "takeback": _("You asked to take back your last move; waiting for {names}."),
            }.get(kind, _("You offered a rematch; waiting for {names}."))
            self.say(asked.format(names=others or _("the others")))
        except IllegalMove as error:
            if error.reason == "OWN_OFFER":
                self.say(_("Your {offer} offer waits for an answer.").format(offer=offer_word(code)))
            else:
                self.say(_("No {offer}: {reason}.").format(offer=offer_word(code), reason=sentence(error)))
        except TafelError as error:
            self.say(_("No {offer}: {reason}.").format(offer=offer_word(code), reason=sentence(error)))

    async def action_decline(self) -> None:
        """n: decline the others' pending offers (or withdraw your own)."""
        if self.seat is None or not self.offers:
            self.say(_("There is no offer to decline."))
            return
        for offer in list(self.offers.values()):
            what = offer_word(offer.kind)
            try:
                await self.client.answer_offer(self.game_id, offer.kind, False, seat=self.seat)
                self.say(
                    _("You withdrew your {offer} offer.").format(offer=what)
                    if offer.by.seat == self.seat
                    else _("You declined the {offer}.").format(offer=what)
                )
            except TafelError as error:
                self.say(_("Could not decline the {offer}: {reason}.").format(offer=what, reason=sentence(error)))
            self.offers.pop(offer.kind, None)
        self.show_status()

    def action_cancel(self) -> None:
        """Escape: no, do not leave or resign; or close the chat line."""
        if self.typing:
            self._close_chat_line()
            return
        self.confirm = None
        self.show_status()

    # -- chat ---------------------------------------------------------------------------------------

    async def follow_chat(self) -> None:
        """The game's chat channel: its history, then each line as it comes; resumed by the SDK
        after a cut from the last line shown (the game's watch already says when it is lost)."""
        log = self.query_one(ChatLog)
        try:
            async with self.client.chat_stream(
                self.chat_channel, max_retries=None, on_ready=self.on_chat_ready
            ) as lines:
                async for message in lines:
                    log.write(self.chat_line(message))
        except TafelError as error:
            log.write(_("Chat is not available: {reason}.").format(reason=sentence(error)))

    def chat_title(self, note: str) -> str:
        who = _("players") if self.seat is not None else _("spectators")
        return _("chat · {who}  {note}").format(who=who, note=note)

    def on_chat_ready(self, ready: social_pb2.ChatReady) -> None:
        log = self.query_one(ChatLog)
        if ready.chat_off:
            log.border_title = self.chat_title(_("(off)"))
            log.write(_("Chat is off in your settings: `tafel settings --chat on` turns it on."))
        elif not ready.can_write:
            log.border_title = self.chat_title(_("(read only)"))
        else:
            log.border_title = self.chat_title(_("(/ to say something)"))

    def chat_line(self, message: social_pb2.ChatMessage) -> str:
        mine = message.author.player_id == self.client.player.player_id
        stamp = clock_time(message.at.ToDatetime(tzinfo=UTC)) + " " if message.HasField("at") else ""
        who = _("you") if mine else player_name(message.author)
        return f"{stamp}{who}: {message.text}"

    def action_chat(self) -> None:
        """/: open the chat line."""
        line = self.query_one("#say", Input)
        self.typing = True
        line.display = True
        line.can_focus = True
        line.focus()
        self.refresh_bindings()

    def _close_chat_line(self) -> None:
        line = self.query_one("#say", Input)
        line.value = ""
        line.display = False
        line.can_focus = False
        self.typing = False
        self.set_focus(None)
        self.refresh_bindings()

    async def on_input_submitted(self, submitted: Input.Submitted) -> None:
        text = submitted.value.strip()
        self._close_chat_line()
        if not text:
            return
        try:
            await self.client.send_chat(self.chat_channel, text)
        except TafelError as error:
            # (a chat line sent too fast: the sentence says when to try again, from the metadata)
            self.query_one(ChatLog).write(_("Not sent: {reason}.").format(reason=sentence(error)))

    async def action_quit(self) -> None:
        live = self.state is not None and not self.state.summary.status.over
        if live and self.seat is not None and not self._confirmed("quit"):
            return
        self.exit(self.result or (_("left; the game goes on") if live and self.seat is not None else ""))


def screen_title(summary: play_pb2.GameSummary, seat: int | None) -> str:
    """ "tafel · Connect Four: alice vs bob" (the game id goes in the sub-title, once)."""
    names = _(" vs ").join(seat_names(summary.players, seat))
    title = game_title(summary.game)
    if seat is None:
        return _("tafel · watching {title}: {names}").format(title=title, names=names)
    return _("tafel · {title}: {names}").format(title=title, names=names)


def _seconds(response: play_pb2.WatchGameResponse) -> float:
    return response.turn_deadline.seconds + response.turn_deadline.nanos / 1e9
