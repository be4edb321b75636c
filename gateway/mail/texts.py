"""The mails' words in English, Dutch and German: the confirmation, the immediate "time running
out" mail and the daily digest (a line per unread notice, a line per game waiting for a move).
Plain text; links point at the web app (TAFEL_PUBLIC_URL) and the web edge's unsubscribe page."""

from __future__ import annotations

from dataclasses import dataclass

from tafel.play.v1 import notices_pb2, play_pb2

N = notices_pb2


@dataclass(frozen=True)
class Written:
    subject: str
    text: str


CONFIRM = {
    "en": (
        "Confirm your e-mail address for tafel",
        "Hello {name},\n\nplease confirm that tafel may send mail to this address by opening this link "
        "(valid for 7 days):\n\n{link}\n\nIf you did not ask for this, ignore this mail: nothing will be sent.\n",
    ),
    "nl": (
        "Bevestig je e-mailadres voor tafel",
        "Hallo {name},\n\nbevestig dat tafel naar dit adres mag mailen door deze link te openen "
        "(7 dagen geldig):\n\n{link}\n\nHeb je hier niet om gevraagd? Negeer dan deze mail; je krijgt niets.\n",
    ),
    "de": (
        "Bestätige deine E-Mail-Adresse für tafel",
        "Hallo {name},\n\nbitte bestätige, dass tafel an diese Adresse schreiben darf, indem du diesen Link "
        "öffnest (7 Tage gültig):\n\n{link}\n\nHast du das nicht angefordert? Dann ignoriere diese Mail; "
        "du bekommst nichts.\n",
    ),
}

TIME_RUNNING_OUT = {
    "en": (
        "Your move: {hours} h left in {game}",
        "Your clock in {game} runs out in about {hours} hours ({deadline} UTC). Move here:\n\n{link}\n",
    ),
    "nl": (
        "Jouw zet: nog {hours} uur in {game}",
        "Je klok in {game} loopt over ongeveer {hours} uur af ({deadline} UTC). Zet hier:\n\n{link}\n",
    ),
    "de": (
        "Du bist am Zug: noch {hours} Std. in {game}",
        "Deine Uhr in {game} läuft in etwa {hours} Stunden ab ({deadline} UTC). Hier ziehen:\n\n{link}\n",
    ),
}

FOOTER = {
    "en": "\n--\nYou get this mail because you asked for it in tafel's settings. Stop these mails: {link}\n",
    "nl": "\n--\nJe krijgt deze mail omdat je erom vroeg in de instellingen van tafel. Stoppen: {link}\n",
    "de": (
        "\n--\nDu bekommst diese Mail, weil du sie in den Einstellungen von tafel gewählt hast. Abbestellen: {link}\n"
    ),
}

DIGEST = {
    "en": ("tafel: what waits for you", "Hello {name},\n\nthis is what waits for you on tafel.\n"),
    "nl": ("tafel: wat er op je wacht", "Hallo {name},\n\ndit wacht er op je bij tafel.\n"),
    "de": ("tafel: was auf dich wartet", "Hallo {name},\n\ndas wartet bei tafel auf dich.\n"),
}
GAMES_HEAD = {
    "en": "Games waiting for your move:",
    "nl": "Partijen waarin jij aan zet bent:",
    "de": "Partien, in denen du am Zug bist:",
}
NOTICES_HEAD = {"en": "Unread notices:", "nl": "Ongelezen meldingen:", "de": "Ungelesene Mitteilungen:"}
GAME_LINE = {"en": "{game} against {opponents}", "nl": "{game} tegen {opponents}", "de": "{game} gegen {opponents}"}
OPEN_INBOX = {"en": "Open your inbox: {link}", "nl": "Open je meldingen: {link}", "de": "Mitteilungen öffnen: {link}"}

NOTICE_LINES: dict[int, dict[str, str]] = {
    N.NOTIFICATION_KIND_YOUR_TURN: {
        "en": "Your turn in {game}",
        "nl": "Jij bent aan zet in {game}",
        "de": "Du bist am Zug in {game}",
    },
    N.NOTIFICATION_KIND_TIME_RUNNING_OUT: {
        "en": "Time running out in {game}: {hours} h left",
        "nl": "Je tijd raakt op in {game}: nog {hours} uur",
        "de": "Deine Zeit läuft ab in {game}: noch {hours} Std.",
    },
    N.NOTIFICATION_KIND_OPPONENT_MOVED: {
        "en": "{player} moved in {game}",
        "nl": "{player} heeft gezet in {game}",
        "de": "{player} hat in {game} gezogen",
    },
    N.NOTIFICATION_KIND_GAME_OVER: {
        "en": "Your game of {game} is over",
        "nl": "Je partij {game} is afgelopen",
        "de": "Deine Partie {game} ist zu Ende",
    },
    N.NOTIFICATION_KIND_CHALLENGE_RECEIVED: {
        "en": "{player} challenged you",
        "nl": "{player} daagt je uit",
        "de": "{player} fordert dich heraus",
    },
    N.NOTIFICATION_KIND_ROUND_STARTED: {
        "en": "Round {round} of {tournament} started",
        "nl": "Ronde {round} van {tournament} is begonnen",
        "de": "Runde {round} von {tournament} hat begonnen",
    },
    N.NOTIFICATION_KIND_ROUND_STARTING_SOON: {
        "en": "Round {round} of {tournament} starts soon",
        "nl": "Ronde {round} van {tournament} begint zo",
        "de": "Runde {round} von {tournament} beginnt bald",
    },
    N.NOTIFICATION_KIND_ANNOUNCEMENT: {
        "en": "{tournament}: {text}",
        "nl": "{tournament}: {text}",
        "de": "{tournament}: {text}",
    },
    N.NOTIFICATION_KIND_OPPONENT_ON_VACATION: {
        "en": "{player} is on vacation",
        "nl": "{player} is op vakantie",
        "de": "{player} ist im Urlaub",
    },
    N.NOTIFICATION_KIND_RESULT_CORRECTED: {
        "en": "A result in {tournament} was corrected: {text}",
        "nl": "Een uitslag in {tournament} is gecorrigeerd: {text}",
        "de": "Ein Ergebnis in {tournament} wurde korrigiert: {text}",
    },
}


def _name(player: play_pb2.Player) -> str:
    return player.display_name or player.username or "?"


def game_link(public_url: str, game_id: str) -> str:
    return f"{public_url}/#/game/{game_id}"


def confirmation(lang: str, name: str, link: str) -> Written:
    subject, body = CONFIRM[lang]
    return Written(subject, body.format(name=name, link=link))


def time_running_out(lang: str, note: notices_pb2.Notification, public_url: str, unsubscribe: str) -> Written:
    subject, body = TIME_RUNNING_OUT[lang]
    values = {
        "game": note.game or "tafel",
        "hours": note.hours_left or 1,
        "deadline": note.deadline.ToDatetime().strftime("%Y-%m-%d %H:%M") if note.HasField("deadline") else "",
        "link": game_link(public_url, note.game_id),
    }
    return Written(subject.format(**values), body.format(**values) + FOOTER[lang].format(link=unsubscribe))


def notice_line(lang: str, note: notices_pb2.Notification) -> str:
    words = NOTICE_LINES.get(note.kind, {}).get(lang, "{game}")
    return words.format(
        game=note.game or note.game_id,
        hours=note.hours_left,
        player=_name(note.player),
        round=note.round,
        tournament=note.tournament_name or note.tournament_id,
        text=note.text,
    )


def digest(
    lang: str,
    name: str,
    notices: list[notices_pb2.Notification],
    games: list[play_pb2.GameSummary],
    me: str,
    public_url: str,
    unsubscribe: str,
) -> Written:
    subject, head = DIGEST[lang]
    lines = [head.format(name=name)]
    if games:
        lines.append(GAMES_HEAD[lang])
        for game in games:
            opponents = ", ".join(_name(p.player) for p in game.players if p.player.player_id != me) or "?"
            line = GAME_LINE[lang].format(game=game.game, opponents=opponents)
            lines.append(f"- {line}: {game_link(public_url, game.game_id)}")
        lines.append("")
    if notices:
        lines.append(NOTICES_HEAD[lang])
        lines.extend(f"- {notice_line(lang, note)}" for note in notices)
        lines.append("")
        lines.append(OPEN_INBOX[lang].format(link=f"{public_url}/#/inbox"))
    return Written(subject, "\n".join(lines) + FOOTER[lang].format(link=unsubscribe))
