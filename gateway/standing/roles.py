"""Who may call what: the one table of access decisions for every method a gateway serves.

Every method of every service on the public port (and the web edge) has an entry here, keyed by
its full name. The front door (gateway/limits.py `CallLimiter`, through `Guard.admit`) refuses a
staff method to a caller without one of its roles (PERMISSION_DENIED ROLE_REQUIRED), and a method
with no entry at all (UNIMPLEMENTED UNKNOWN_METHOD): a new RPC is never served by accident before
someone decides who may call it, and tests/gateway/standing/test_roles.py fails until they do.

Roles do not nest by rank: an organiser is not a moderator. An admin may do everything.
docs/security.md shows this table in words.
"""

from __future__ import annotations

from dataclasses import dataclass

from tafel.play.v1 import play_pb2

PLAYER: int = play_pb2.ROLE_PLAYER
ORGANISER: int = play_pb2.ROLE_ORGANISER
MODERATOR: int = play_pb2.ROLE_MODERATOR
ADMIN: int = play_pb2.ROLE_ADMIN
STAFF_ROLES = frozenset({ORGANISER, MODERATOR, ADMIN})
# Who has a tournament director's powers over every tournament (a creator has them over their own).
DIRECTORS = frozenset({ORGANISER, ADMIN})
ROLE_NAMES: dict[int, str] = {PLAYER: "player", ORGANISER: "organiser", MODERATOR: "moderator", ADMIN: "admin"}
ROLES_BY_NAME: dict[str, int] = {name: role for role, name in ROLE_NAMES.items()}


@dataclass(frozen=True)
class Access:
    """Who may call a method: `anonymous` callers need no session at all (the servicer may still
    read one if sent); otherwise a session whose role is in `roles`."""

    roles: frozenset[int]
    anonymous: bool = False

    def allows(self, role: int) -> bool:
        return self.anonymous or role in self.roles


EVERYONE = frozenset({PLAYER, ORGANISER, MODERATOR, ADMIN})
PUBLIC = Access(EVERYONE, anonymous=True)
SIGNED_IN = Access(EVERYONE)
MODERATORS = Access(frozenset({MODERATOR, ADMIN}))
ADMINS = Access(frozenset({ADMIN}))


def _service(name: str, methods: dict[str, Access]) -> dict[str, Access]:
    return {f"/{name}/{method}": access for method, access in methods.items()}


POLICY: dict[str, Access] = {
    **_service(
        "tafel.play.v1.AccountService",
        {
            "Register": PUBLIC,
            "SignIn": PUBLIC,
            "SignInAsGuest": PUBLIC,
            "GetMe": SIGNED_IN,
            "RefreshSession": SIGNED_IN,
            "SignOut": SIGNED_IN,
            "ChangePassword": SIGNED_IN,
            "DeleteAccount": SIGNED_IN,
            "ExportMyData": SIGNED_IN,
            "SetDisplayName": SIGNED_IN,
        },
    ),
    **_service(
        "tafel.play.v1.LobbyService",
        {
            "ListGameTypes": PUBLIC,
            "FindMatch": SIGNED_IN,
            "CreateRoom": SIGNED_IN,
            "JoinRoom": SIGNED_IN,
            "LeaveRoom": SIGNED_IN,
            "StartRoom": SIGNED_IN,
            "GetRoom": SIGNED_IN,
            "WatchRoom": SIGNED_IN,
            "ListMySearches": SIGNED_IN,
            "CancelSearch": SIGNED_IN,
        },
    ),
    **_service(
        "tafel.play.v1.GameService",
        {
            "GetGame": SIGNED_IN,
            "SubmitMove": SIGNED_IN,
            "Resign": SIGNED_IN,
            "ListMyGames": SIGNED_IN,
            "ListLiveGames": SIGNED_IN,
            "WatchGame": SIGNED_IN,
            "Play": SIGNED_IN,
            "GetGameRecord": SIGNED_IN,
            "ListGameRecords": SIGNED_IN,
            "MakeOffer": SIGNED_IN,
            "AnswerOffer": SIGNED_IN,
            "AbortGame": SIGNED_IN,
        },
    ),
    **_service("tafel.play.v1.EventService", {"WatchMyEvents": SIGNED_IN}),
    **_service(
        "tafel.play.v1.ChallengeService",
        {
            "CreateChallenge": SIGNED_IN,
            "AcceptChallenge": SIGNED_IN,
            "DeclineChallenge": SIGNED_IN,
            "CancelChallenge": SIGNED_IN,
            "GetChallenge": SIGNED_IN,
            "ListChallenges": SIGNED_IN,
            "ListOpenChallenges": SIGNED_IN,
        },
    ),
    **_service(
        "tafel.play.v1.ChatService",
        {"SendChatMessage": SIGNED_IN, "WatchChat": SIGNED_IN, "ListChatMessages": SIGNED_IN},
    ),
    **_service("tafel.play.v1.FriendService", {"Follow": SIGNED_IN, "Unfollow": SIGNED_IN, "ListFollowing": SIGNED_IN}),
    **_service(
        "tafel.play.v1.ProfileService",
        {"GetProfile": SIGNED_IN, "GetMySettings": SIGNED_IN, "UpdateMySettings": SIGNED_IN},
    ),
    **_service("tafel.play.v1.BotService", {"RequestBot": SIGNED_IN, "ServeBotRequests": SIGNED_IN}),
    **_service(
        "tafel.play.v1.RatingService",
        {"ListLeaderboards": PUBLIC, "GetLeaderboard": PUBLIC, "GetRatings": PUBLIC, "GetPersonalBests": PUBLIC},
    ),
    # Organisers' powers over any tournament are checked by the tournament service itself (a
    # tournament's creator has them over their own): the calls are open to every player.
    **_service(
        "tafel.play.v1.TournamentService",
        {
            "CreateTournament": SIGNED_IN,
            "GetTournament": SIGNED_IN,
            "ListTournaments": SIGNED_IN,
            "JoinTournament": SIGNED_IN,
            "LeaveTournament": SIGNED_IN,
            "StartTournament": SIGNED_IN,
            "CancelTournament": SIGNED_IN,
            "GetStandings": SIGNED_IN,
            "GetRound": SIGNED_IN,
            "WatchTournament": SIGNED_IN,
            "ListTournamentGames": SIGNED_IN,
            "ExportTournament": SIGNED_IN,
            "PauseArenaPlay": SIGNED_IN,
            "UpdateTournament": SIGNED_IN,
            "RemovePlayer": SIGNED_IN,
            "PauseTournament": SIGNED_IN,
            "ResumeTournament": SIGNED_IN,
            "StartNextRound": SIGNED_IN,
            "TerminateTournament": SIGNED_IN,
            "CorrectResult": SIGNED_IN,
            "Announce": SIGNED_IN,
            "ListTournamentAudit": SIGNED_IN,
        },
    ),
    **_service(
        "tafel.play.v1.NotificationService",
        {
            "ListNotifications": SIGNED_IN,
            "MarkNotificationsRead": SIGNED_IN,
            "ClearNotifications": SIGNED_IN,
            "GetNotificationSettings": SIGNED_IN,
            "UpdateNotificationSettings": SIGNED_IN,
        },
    ),
    # The confirmation link and the unsubscribe link work without a session: the token is the proof.
    **_service(
        "tafel.play.v1.EmailService",
        {"SetEmail": SIGNED_IN, "GetEmail": SIGNED_IN, "ConfirmEmail": PUBLIC, "Unsubscribe": PUBLIC},
    ),
    **_service(
        "tafel.play.v1.VacationService",
        {"StartVacation": SIGNED_IN, "EndVacation": SIGNED_IN, "GetVacation": SIGNED_IN},
    ),
    **_service(
        "tafel.play.v1.SafetyService",
        {
            "BlockPlayer": SIGNED_IN,
            "UnblockPlayer": SIGNED_IN,
            "MutePlayer": SIGNED_IN,
            "UnmutePlayer": SIGNED_IN,
            "ListBlocked": SIGNED_IN,
            "Report": SIGNED_IN,
            "GetMyStanding": SIGNED_IN,
        },
    ),
    **_service(
        "tafel.admin.v1.ModerationService",
        {
            "ListReports": MODERATORS,
            "GetReport": MODERATORS,
            "ResolveReport": MODERATORS,
            "LookUpAccount": MODERATORS,
            "WarnPlayer": MODERATORS,
            "SanctionPlayer": MODERATORS,
            "LiftSanction": MODERATORS,
            "RenameAccount": MODERATORS,
            "ListAuditLog": MODERATORS,
        },
    ),
    **_service("tafel.admin.v1.AdminService", {"SetRole": ADMINS, "ListStaff": ADMINS}),
    # The standard services every server offers.
    **_service("grpc.health.v1.Health", {"Check": PUBLIC, "Watch": PUBLIC, "List": PUBLIC}),
    **_service("grpc.reflection.v1.ServerReflection", {"ServerReflectionInfo": PUBLIC}),
    **_service("grpc.reflection.v1alpha.ServerReflection", {"ServerReflectionInfo": PUBLIC}),
}


def role_names(access: Access) -> str:
    return ",".join(ROLE_NAMES[role] for role in sorted(access.roles))
