"""A refusal in the player's language, chosen by its machine reason (ErrorInfo.reason; the list is
protos/tafel/games/v1/reasons.proto), so a server's English sentence never reaches a Dutch or German
player. English keeps the server's own sentence (it may say more, e.g. how long to wait); the other
languages get the sentence here, with the facts the ErrorInfo's metadata carries (an end time, a
wait) added in words. A reason a newer server sends and this table lacks reads as a general refusal
with its code. tests/clients/test_i18n_catalogue.py fails when a listed reason has no sentence here
or in tafel.cli.describe.ENDINGS (how a game ended), or a sentence lacks a translation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tafel.i18n import DEFAULT, N_, _, date_time, language, ngettext

if TYPE_CHECKING:
    from tafel.errors import TafelError

# Every reason a refused call, a stream or a cancelled tournament can carry, as a player reads it
# (lower case, no full stop: the caller puts it in a sentence such as "Move refused: ...").
REFUSALS: dict[str, str] = {
    # any call
    "TOKEN_MISSING": N_("you are not signed in; sign in first"),
    "TOKEN_INVALID": N_("this sign-in is not valid here; sign in again"),
    "TOKEN_EXPIRED": N_("your session has expired; sign in again"),
    "SESSION_REVOKED": N_("your session was ended (signed out or replaced); sign in again"),
    "INTERNAL_ONLY": N_("only the platform's own servers may call this"),
    "MALFORMED_REQUEST": N_("the game server could not read this request"),
    "RATE_LIMITED": N_("too many requests from this address; wait a moment and try again"),
    "TOO_MANY_STREAMS": N_("this session has too many open connections; close one"),
    "BUSY": N_("the game server is busy right now; try again shortly"),
    "INTERNAL": N_("the game server ran into a problem; try again"),
    "STORE_UNAVAILABLE": N_("the game server cannot reach its storage right now; try again"),
    "RULES_UNAVAILABLE": N_("the game's rules server cannot be reached right now; try again"),
    "RULES_TIMEOUT": N_("the game's rules server did not answer in time; try again"),
    "SHUTTING_DOWN": N_("this game server is shutting down; reconnecting to another"),
    "GATEWAY_STOPPING": N_("this game server is stopping; reconnecting to another"),
    # accounts
    "BAD_USERNAME": N_("a user name is 3 to 24 letters, digits, _ or - (and may not look like a guest's)"),
    "BAD_PASSWORD": N_("the password is too short or too long"),
    "USERNAME_TAKEN": N_("that user name is taken"),
    "BAD_CREDENTIALS": N_("wrong user name or password"),
    "TOO_MANY_ATTEMPTS": N_("too many failed sign-ins; wait a while and try again"),
    "BAD_DISPLAY_NAME": N_("a display name may not contain line breaks, tabs or other control characters"),
    "DISPLAY_NAME_TOO_LONG": N_("a display name is at most 32 characters"),
    "DISPLAY_NAME_RESERVED": N_("a display name may not look like a bot's, a guest's or the staff's"),
    "WRONG_PASSWORD": N_("the current password is wrong"),
    "GUEST_ACCOUNT": N_("a guest has no account to change; register first"),
    "ACCOUNT_SUSPENDED": N_("your account is suspended"),
    "ACCOUNT_BANNED": N_("your account is banned"),
    # roles, safety and moderation
    "ROLE_REQUIRED": N_("only the staff may do this"),
    "UNKNOWN_METHOD": N_("the game server does not offer this"),
    "PLAYER_NOT_FOUND": N_("there is no player with that user name"),
    "SELF_NOT_ALLOWED": N_("you cannot do that to yourself"),
    "TOO_MANY_BLOCKS": N_("you block as many players as allowed; unblock one first"),
    "BAD_REPORT_REASON": N_("choose a reason for the report from the list"),
    "BAD_DETAILS": N_("the text is too long or contains characters that are not allowed"),
    "REPORT_NOT_FOUND": N_("there is no report with that id"),
    "REPORT_RESOLVED": N_("that report was resolved already"),
    "BAD_SANCTION": N_("choose a kind of sanction, and a duration for a mute or suspension"),
    "SANCTION_NOT_FOUND": N_("the account has no sanction in force with that id"),
    "STAFF_NOT_SANCTIONABLE": N_("take away the account's staff role first"),
    "BAD_ROLE": N_("choose a role"),
    "LAST_ADMIN": N_("the last admin cannot give up the role"),
    "CHAT_MUTED": N_("you are muted in chat"),
    # ids and requests
    "BAD_GAME_ID": N_("that is not a valid game id"),
    "BAD_REQUEST_ID": N_("that is not a valid request id"),
    "BAD_PLAYER_ID": N_("that is not a valid player id"),
    "BAD_GAME": N_("that is not a valid game name"),
    "BAD_TOURNAMENT_ID": N_("that is not a valid tournament id"),
    "BAD_PAGE_SIZE": N_("that page size is not allowed"),
    "BAD_PAGE_TOKEN": N_("that page of the list is not valid (any more); start from the first page"),
    "REQUEST_ID_REUSED": N_("this request was already sent with different contents"),
    # games
    "GAME_NOT_FOUND": N_("there is no such game (or it is not visible to you)"),
    "GAME_EXISTS": N_("a game with this id exists already"),
    "RECORD_NOT_FOUND": N_("there is no record of that game (unknown, or not finished yet)"),
    "REPLAY_UNAVAILABLE": N_("that game's positions can no longer be rebuilt for a replay"),
    "NOT_A_PLAYER": N_("only the game's players may do that"),
    "NOT_YOUR_SEAT": N_("that seat is not yours"),
    "SEAT_REQUIRED": N_("you hold several seats in this game: say which one"),
    "MOVE_MISSING": N_("no move was sent"),
    "ACTION_MISSING": N_("nothing to do was sent"),
    "WRONG_GAME": N_("that move or those options belong to another game"),
    "BAD_SEAT": N_("there is no such seat at this table"),
    "BAD_TURN_CLOCK": N_("the turn clock is outside its range"),
    "VERSION_MISMATCH": N_("the game moved on meanwhile; look at the board and move again"),
    "GAME_OVER": N_("the game is over"),
    "NOT_YOUR_TURN": N_("it is not your turn"),
    "BAD_EVENT_ID": N_("that is not a valid event id"),
    "EVENT_ID_OUT_OF_RANGE": N_("the game has no event that far on"),
    "EVENTS_UNAVAILABLE": N_("the game's moves cannot be followed right now; trying again"),
    "WATCHER_TOO_SLOW": N_("this screen fell behind the game; catching up"),
    # moves
    "COLUMN_OUT_OF_RANGE": N_("the board has no such column"),
    "COLUMN_FULL": N_("that column is full"),
    "NO_BONUS_DISC": N_("your bonus disc is used already"),
    "NO_ORDINARY_DISC": N_("you have no ordinary disc left"),
    "BAD_DIE": N_("choose a die"),
    "BAD_TARGET": N_("choose a cell or a joker field for the die"),
    "BAD_PLACEMENT": N_("that is not a valid placement of dice"),
    "NO_ROLL": N_("the dice have not been rolled yet"),
    "SAME_DIE_TWICE": N_("each die can be placed only once a turn"),
    "WRONG_DIE_FOR_ROLE": N_("the active player places coloured dice, the others the white die"),
    "JOKER_USED": N_("that joker field is used already"),
    "WRONG_COLOUR": N_("a die goes into a cell of its own colour (the white die into any colour)"),
    "SQUARE_NOT_OPEN": N_("that square is closed or crossed out"),
    "CELL_FILLED": N_("that cell is filled already"),
    "FIXED_VALUE_MISMATCH": N_("a pre-printed cell takes only its own number"),
    "TOO_MANY_DICE": N_("that is more dice than you may place this turn"),
    "MUST_PLACE": N_("you must place every die that fits"),
    # finding a game, rooms, bots
    "GAME_MISSING": N_("choose a game"),
    "UNKNOWN_GAME": N_("there is no game of that name here"),
    "BAD_OPTIONS": N_("the game does not allow those options for this table"),
    "OPTIONS_MISMATCH": N_("those options belong to another game"),
    "UNKNOWN_OPTION": N_("the game has no such option"),
    "OPTION_OUT_OF_RANGE": N_("an option is outside what the game allows"),
    "OPTION_NOT_FOR_SEATS": N_("that option is only for smaller tables"),
    "BAD_SEATS": N_("the game is not played with that many players"),
    "BAD_TIME_CONTROL": N_("the time per move is outside the allowed range"),
    "NO_PLAYERS": N_("a game needs at least one player"),
    "BAD_LEVEL": N_("a bot's level is 1, 2 or 3"),
    "NOT_A_BOT_REQUEST": N_("that is not a request for a bot"),
    "ALREADY_QUEUED": N_("you are already looking for this game with other settings; stop that search first"),
    "SEARCH_TAKEN_OVER": N_("a newer search of yours for this game took over"),
    "TICKET_EXPIRED": N_("no opponent was found in time; search again"),
    "MATCH_REFUSED": N_("the game refused the options for the table that was found"),
    "MATCH_NOT_STARTED": N_("an opponent was found but the game could not start; search again"),
    "NO_LOBBY": N_("this game server offers no matchmaking"),
    "WATCH_NEEDS_PLAY_STREAM": N_("following a search needs the live connection"),
    "BAD_ROOM_CODE": N_("that is not a room code"),
    "ROOM_NOT_FOUND": N_("there is no open room with that code (rooms expire)"),
    "ROOM_FULL": N_("every seat in that room is taken"),
    "ROOM_STARTED": N_("that room's game has started already"),
    "ROOM_CLOSED": N_("that room is closed"),
    "ROOM_NOT_OPEN": N_("that room takes no more players"),
    "NOT_IN_ROOM": N_("you are not in that room"),
    "NOT_HOST": N_("only the room's host may start it"),
    "NOT_ENOUGH_PLAYERS": N_("the game needs more players to start"),
    "NO_FREE_CODE": N_("no free room code was found; try again"),
    # challenges
    "BAD_CHALLENGE": N_("challenge one player, one bot or anyone: exactly one of them"),
    "BAD_EXPIRY": N_("a challenge waits between 10 seconds and 24 hours"),
    "BAD_DECLINE_REASON": N_("choose a reason from the list"),
    "CHALLENGE_NOT_FOUND": N_("there is no such challenge"),
    "CHALLENGE_NOT_PENDING": N_("that challenge was answered, withdrawn or expired already"),
    "CHALLENGE_NOT_ALLOWED": N_("this player takes no challenges from you"),
    "CHALLENGE_PENDING": N_("a challenge between you two is waiting already; answer or withdraw it"),
    "NOT_CHALLENGED": N_("that challenge is not to you"),
    "NOT_CHALLENGER": N_("only the player who made the challenge may withdraw it"),
    "NO_BOTS": N_("no bots are available right now; try again later"),
    "RATED_NEEDS_ACCOUNT": N_("guests play casual games only; register to play rated games"),
    # offers
    "OFFER_NOT_ALLOWED": N_("that offer is not possible in this game"),
    "OFFER_PENDING": N_("an offer of this kind is waiting for an answer already"),
    "NO_OFFER": N_("there is no offer to answer"),
    "OWN_OFFER": N_("that is your own offer; the others answer it"),
    "NOTHING_TO_TAKE_BACK": N_("you have no move to take back"),
    "TOO_LATE_TO_ABORT": N_("everyone has moved already; resign or offer a draw instead"),
    # chat and people
    "BAD_CHAT_CHANNEL": N_("that is not a chat channel"),
    "CHAT_CHANNEL_NOT_FOUND": N_("there is no such chat for you"),
    "CHAT_NEEDS_ACCOUNT": N_("guests can read the chat but not write; register to take part"),
    "CHAT_NOT_ALLOWED": N_("you cannot write in this chat"),
    "CHAT_OFF": N_("chat is off in your settings; turn it on to write"),
    "CHAT_EMPTY": N_("the line is empty"),
    "CHAT_TOO_LONG": N_("a chat line is at most 500 characters"),
    "CHAT_TOO_FAST": N_("you are writing too fast"),
    "BAD_MESSAGE_ID": N_("that is not a valid message id"),
    "MESSAGE_ID_OUT_OF_RANGE": N_("those messages are no longer kept"),
    "MESSAGE_NOT_FOUND": N_("that message is not in this chat"),
    "TOO_MANY_FOLLOWS": N_("you follow as many players as allowed; unfollow one first"),
    "FOLLOW_NEEDS_ACCOUNT": N_("guests cannot follow or be followed; register first"),
    "BAD_CHALLENGE_POLICY": N_("choose who may challenge you from the list"),
    "UNKNOWN_LEADERBOARD": N_("there is no leaderboard of that name"),
    # correspondence, notices, e-mail and vacations
    "BAD_DAYS_PER_MOVE": N_("correspondence takes 1, 2, 3, 5, 7, 10 or 14 days a move"),
    "BAD_NOTIFICATION_ID": N_("that is not a notice id"),
    "BAD_NOTIFICATION_SETTINGS": N_(
        "those notice settings are out of range (quiet hours within a day, the digest hour 0-23)"
    ),
    "BAD_TIME_ZONE": N_("that is not a time zone name (e.g. Europe/Amsterdam)"),
    "EMAIL_NEEDS_ACCOUNT": N_("guests have no e-mail; register first"),
    "BAD_EMAIL": N_("that is not an e-mail address"),
    "EMAIL_TOO_FAST": N_("at most 3 confirmation mails an hour"),
    "BAD_EMAIL_TOKEN": N_("the link is unknown, replaced by a newer one, or more than 7 days old; ask for a new one"),
    "BAD_EMAIL_LANGUAGE": N_("the mails' language is English, Dutch or German"),
    "VACATION_NEEDS_ACCOUNT": N_("guests do not take vacations; register first"),
    "BAD_VACATION_LENGTH": N_("a vacation is whole hours, at most what is left of this year's allowance"),
    "NO_VACATION_LEFT": N_("this year's vacation allowance is used up"),
    # tournaments
    "BAD_SHEET": N_("Colour Square has sheet A or B"),
    "BAD_NAME": N_("the tournament's name is too short or too long"),
    "BAD_FORMAT": N_("choose a tournament format"),
    "BAD_TABLE_SIZE": N_("the game and the format do not allow that many players a table"),
    "BAD_ROUNDS": N_("that number of rounds is not allowed"),
    "BAD_CAPACITY": N_("that number of players is not allowed"),
    "BAD_START": N_("that start time cannot be used"),
    "BAD_STATE": N_("there is no such tournament state"),
    "ID_TAKEN": N_("the new tournament's id was taken; try again"),
    "TOURNAMENT_NOT_FOUND": N_("there is no such tournament"),
    "NO_ROUND": N_("no round has been paired yet"),
    "TOURNAMENT_FULL": N_("the tournament is full"),
    "NOT_REGISTERING": N_("registration has closed"),
    "ALREADY_STARTED": N_("the tournament has started (or ended) already"),
    "NOT_RUNNING": N_("the tournament is not running"),
    "NOT_IN_TOURNAMENT": N_("you are not in this tournament"),
    "NOT_ENTERED": N_("that player does not take part in this tournament"),
    "NOT_ORGANISER": N_("only the tournament's directors may do this"),
    "NOT_REGISTERED": N_("that player is not registered in this tournament"),
    "DUPLICATE_ENTRANT": N_("a player is registered twice"),
    "BAD_RESULT": N_("that result does not rank every seat"),
    "NO_SUCH_ROUND": N_("the tournament has no such round"),
    "NO_SUCH_GAME": N_("there is no such game"),
    "CANCELLED_BY_ORGANISER": N_("the organiser cancelled the tournament"),
    "TOO_FEW_PLAYERS": N_("too few players registered to start"),
    # tournaments: directors, entry, arenas
    "BAD_UPDATE_MASK": N_("that setting cannot be changed (now)"),
    "BAD_REGISTRATION_WINDOW": N_("registration must open before it closes, and close no later than the start"),
    "BAD_ENTRY": N_("entry conditions out of range (rating 0-4000, games 0-10000)"),
    "BAD_INVITATION_CODE": N_("that is not this tournament's invitation code"),
    "BAD_LATE_JOIN": N_("late joining is for Swiss tournaments, up to the last round"),
    "BAD_ROUND_TIMES": N_("round start times must be in the future and in order, one per round after the first"),
    "BAD_ARENA_DURATION": N_("an arena lasts 5 minutes to 24 hours"),
    "REGISTRATION_NOT_OPEN": N_("registration opens {opens_at}"),
    "RATING_TOO_LOW": N_("this tournament needs a rating of at least {min_rating} in its game"),
    "TOO_FEW_RATED_GAMES": N_("this tournament needs at least {min_rated_games} rated games in its game"),
    "BANNED_FROM_TOURNAMENT": N_("a director removed you from this tournament for good"),
    "ROUND_IN_PROGRESS": N_("games of the current round are still being played"),
    "NO_NEXT_ROUND": N_("every round has been played"),
    "BAD_CORRECTION": N_("give one place per seat (1 = best) and a reason of 1-200 characters"),
    "GAME_NOT_CORRECTABLE": N_("a bye has no result to correct"),
    "BAD_REASON": N_("a reason is at most 200 characters"),
    "BAD_ANNOUNCEMENT": N_("an announcement is 1 to 1000 characters"),
    "ANNOUNCEMENTS_TOO_FAST": N_("at most 10 announcements an hour"),
    "BAD_EXPORT": N_("choose CSV or JSON, and known parts"),
    "NOT_ARENA": N_("only an arena's players pause and come back"),
    "TERMINATED_BY_DIRECTOR": N_("a director ended the tournament early"),
}

# The refusals whose sentence names a fact from the ErrorInfo's metadata (said as the
# placeholder's name); without it the fact reads "?".
FACTS = ("opens_at", "min_rating", "min_rated_games")

# What the SDK itself raises (in English) on this machine, never the server.
LOCAL_REFUSALS: dict[str, str] = {
    "MATCH_ENDED": N_("the search ended without a match"),
    "NO_READY": N_("the game server answered out of order; try again"),
    "NOT_SEATED": N_("the bot has no seat in that game"),
}


def refusal_text(error: TafelError) -> str:
    """What a player reads for `error`: in English the server's sentence, else the sentence for its
    reason in the player's language, with the metadata's facts; lower case, without a full stop."""
    from tafel.errors import PLAIN_FALLBACK, PLAIN_MESSAGES

    english = (error.message or error.reason.replace("_", " ").lower()).rstrip(".")
    if language() == DEFAULT:
        return english + _wait(error)
    if not error.remote:
        # Made on this machine: the terminal's own words are in the player's language already.
        local = LOCAL_REFUSALS.get(error.reason)
        return _(local) if local else english
    plain = {*PLAIN_MESSAGES.values(), PLAIN_FALLBACK}
    if error.reason == error.code.name and error.message in plain:
        return _(error.message)  # a status gRPC made, without a reason of the platform's
    known = REFUSALS.get(error.reason)
    if known is None:
        return _("the game server refused this ({code})").format(code=error.reason)
    text = _(known)
    if "{" in text:
        text = text.format(**_facts(error))
    if error.until is not None:
        text += " " + _("until {time}").format(time=date_time(error.until, zone=True))
    if error.reason == "ACCOUNT_BANNED":
        text += " " + _("until a moderator lifts the ban")
    text += _wait(error)
    moderator = error.metadata.get("reason", "")
    if moderator and error.reason in ("ACCOUNT_SUSPENDED", "ACCOUNT_BANNED"):
        # The moderator's own words, as they wrote them: not ours to translate.
        text += " " + _("(the moderator's reason: {reason})").format(reason=moderator)
    return text


def _facts(error: TafelError) -> dict[str, str]:
    """The metadata's facts in words: a time in the player's language, a number as it is."""
    from datetime import datetime

    facts = {name: error.metadata.get(name, "") or "?" for name in FACTS}
    try:
        facts["opens_at"] = date_time(datetime.fromisoformat(facts["opens_at"]), zone=True)
    except ValueError:
        pass
    return facts


def _wait(error: TafelError) -> str:
    """ " (again in 3 seconds)" for a refusal that says how long to wait (CHAT_TOO_FAST's metadata)."""
    wait = error.metadata.get("retry_after_ms", "")
    if not wait.isdigit():
        return ""
    seconds = max(1, round(int(wait) / 1000))
    return " " + ngettext("(again in {n} second)", "(again in {n} seconds)", seconds).format(n=seconds)
