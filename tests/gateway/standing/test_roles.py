"""The role table (gateway/standing/roles.py) decides every method the gateway serves, and the
guard applies it: a method without a decision fails here (and is refused UNKNOWN_METHOD if it ever
reaches a gateway), and each method's allowed roles are the ones written below."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import descriptor_pool

from gateway.auth import Identity
from gateway.server import service_names
from gateway.standing.guard import Guard
from gateway.standing.model import BAN, SUSPENSION, SanctionRecord, now_ms
from gateway.standing.roles import ADMIN, MODERATOR, ORGANISER, PLAYER, POLICY
from gateway.standing.tables import StandingTables
from kit.errors import Refused

STANDARD = ("grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection")
PUBLIC = {
    "AccountService": {"Register", "SignIn", "SignInAsGuest"},
    "LobbyService": {"ListGameTypes"},
    "RatingService": {"ListLeaderboards", "GetLeaderboard", "GetRatings", "GetPersonalBests"},
    # A mailed link works without signing in: its token is the proof.
    "EmailService": {"ConfirmEmail", "Unsubscribe"},
}
STAFF = {
    "tafel.admin.v1.ModerationService": {MODERATOR, ADMIN},
    "tafel.admin.v1.AdminService": {ADMIN},
}
EVERY_ROLE = {PLAYER, ORGANISER, MODERATOR, ADMIN}


def served_methods() -> list[str]:
    pool = descriptor_pool.Default()
    methods = []
    for service in service_names():
        descriptor = pool.FindServiceByName(service)
        methods += [f"/{service}/{method.name}" for method in descriptor.methods]
    return methods


def test_every_served_method_has_a_decision_and_no_decision_is_stale() -> None:
    methods = set(served_methods())
    assert len(methods) >= 60  # the nine services of today
    decided = {name for name in POLICY if not name.startswith(tuple(f"/{s}/" for s in STANDARD))}
    assert methods - set(POLICY) == set(), "methods without an access decision in gateway/standing/roles.py"
    assert decided - methods == set(), "decisions for methods the gateway does not serve"


@pytest.mark.parametrize("method", served_methods())
def test_each_method_allows_exactly_its_roles(method: str) -> None:
    service, name = method.strip("/").split("/")
    access = POLICY[method]
    if service in STAFF:
        assert set(access.roles) == STAFF[service] and not access.anonymous
    else:
        assert set(access.roles) == EVERY_ROLE
        assert access.anonymous == (name in PUBLIC.get(service.rsplit(".", 1)[-1], set()))


class Tables(StandingTables):
    def __init__(self) -> None:
        super().__init__(None)  # type: ignore[arg-type]  # no Redis: filled by hand


def identity(player_id: str, guest: bool = False) -> Identity:
    return Identity(player_id, f"name-{player_id}", guest, 2e9)


def refusal(guard: Guard, method: str, who: Identity | None) -> tuple[grpc.StatusCode, str] | None:
    def strict() -> Identity:
        if who is None:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING", "sign in")
        return who

    try:
        guard.admit(method, lambda: who, strict)
    except Refused as refused:
        return refused.code, refused.reason
    return None


def test_guard_applies_roles_and_sanctions() -> None:
    tables = Tables()
    tables.roles.update(mod=MODERATOR, adm=ADMIN, org=ORGANISER)
    guard = Guard(tables)
    reports = "/tafel.admin.v1.ModerationService/ListReports"
    set_role = "/tafel.admin.v1.AdminService/SetRole"
    denied = (grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED")
    assert refusal(guard, reports, identity("p")) == denied
    assert refusal(guard, reports, identity("g", guest=True)) == denied
    assert refusal(guard, reports, identity("org")) == denied
    assert refusal(guard, reports, None) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")
    assert refusal(guard, reports, identity("mod")) is None
    assert refusal(guard, set_role, identity("mod")) == denied
    assert refusal(guard, set_role, identity("adm")) is None
    assert refusal(guard, "/tafel.play.v1.GameService/Play", identity("p")) is None
    assert refusal(guard, "/tafel.play.v1.Nope/Nothing", identity("adm")) == (
        grpc.StatusCode.UNIMPLEMENTED,
        "UNKNOWN_METHOD",
    )
    at = now_ms()
    tables.sanctions["p"] = (SanctionRecord("s1", SUSPENSION, "spam", at, at + 60_000),)
    assert refusal(guard, "/tafel.play.v1.AccountService/GetMe", identity("p")) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "ACCOUNT_SUSPENDED",
    )
    tables.sanctions["p"] = (SanctionRecord("s1", SUSPENSION, "spam", at - 120_000, at - 60_000),)
    assert refusal(guard, "/tafel.play.v1.AccountService/GetMe", identity("p")) is None  # it ended
    tables.sanctions["p"] = (SanctionRecord("s2", BAN, "cheating", at, 0),)
    assert refusal(guard, "/tafel.play.v1.LobbyService/ListGameTypes", identity("p")) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "ACCOUNT_BANNED",
    )
