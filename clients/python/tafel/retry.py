"""Retries in the SDK, in one place.

Unary calls: gRPC's own retry policy, set in the channel's service config (``service_config()``,
which `TafelClient.connect` installs): a call that fails UNAVAILABLE (a gateway restarting, or its
dependency down), CANCELLED by the server (a gateway whose stop grace ran out) or
DEADLINE_EXCEEDED is tried again up to three times with exponential backoff, on whichever gateway
the channel picks next. Every call it retries is safe to repeat: state-changing ones carry request
ids or set a state (a block). Those that do not are left out (NOT_IDEMPOTENT): retried, Register,
CreateRoom and RequestBot could make a second account, room or bot request, a staff's warning or
sanction could be given twice, and a call whose first try did its work would be refused by the
second (ChangePassword: the old password is wrong now; a rename: the old name is gone). MakeOffer
carries a request id (TafelClient.make_offer makes one): resent, it is answered with its offer.

Challenges and offers: CreateChallenge carries a request id; an AcceptChallenge resent returns the
first acceptance; AnswerOffer is counted once (the server's compare-and-set). A resent
DeclineChallenge, CancelChallenge or AbortGame whose first try did its work is refused (not
pending, game over): the client reads the challenge or game and answers as the first try would
have (TafelClient.decline_challenge, cancel_challenge, abort_game).

Chat, following, profiles (social.proto): SendChatMessage carries a request id (resent, it is
answered with the first message); Follow, Unfollow and UpdateMySettings set a state; the rest read.

Tournaments: directors' calls set a state (RemovePlayer, Pause/Resume, UpdateTournament,
CorrectResult to the same ranks) or carry a request id (Announce); StartNextRound is not resent,
and a resent TerminateTournament whose first try did its work is answered with the tournament
(TafelClient.terminate_tournament).

Long-lived streams (watches, matchmaking, the play stream, the bot pool) resume themselves from
where they were; between attempts they wait `Attempts.failed()`: exponential backoff with a cap
and jitter, and a limit on consecutive failures.

(The servers' equivalent is kit/retry.py; a client package for third parties cannot import the
platform's kit, hence this module.)
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import grpc

from tafel.admin.v1 import admin_pb2
from tafel.play.v1 import bots_pb2, challenges_pb2, notices_pb2, play_pb2, safety_pb2, social_pb2, tournaments_pb2

# CANCELLED as an RPC error is the server's doing (a gateway whose stop grace ran out): this side's
# own cancellations surface as asyncio's, never as a status.
RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED)
# A long-lived stream also resumes after INTERNAL.
STREAM_RETRYABLE = (*RETRYABLE, grpc.StatusCode.INTERNAL)

NOT_IDEMPOTENT = frozenset(
    {
        "Register",
        "CreateRoom",
        "RequestBot",
        "ChangePassword",
        "DeleteAccount",
        # Each try mails a confirmation link (3 an hour): a resend could use one up or be refused.
        "SetEmail",
        # tafel.admin.v1: none carries a request id; its reads are retried.
        "ResolveReport",
        "WarnPlayer",
        "SanctionPlayer",
        "LiftSanction",
        "RenameAccount",
        "SetRole",
        # A second try could start the round after the one the first started.
        "StartNextRound",
    }
)
UNARY_ATTEMPTS = 4  # the first try and three retries


@dataclass(frozen=True)
class Backoff:
    first_s: float = 0.1
    cap_s: float = 2.0
    factor: float = 2.0
    jitter: float = 0.2  # 0..1: the share of a delay that may be taken off at random

    def delay(self, failures: int) -> float:
        """The wait after the `failures`-th consecutive failure (1 = the first)."""
        nominal = min(self.cap_s, self.first_s * self.factor ** max(0, failures - 1))
        return nominal * (1.0 - self.jitter * random.random())


class Attempts:
    """Consecutive failures of one stream, the backoff between its attempts and when to give up."""

    def __init__(self, limit: int | None, backoff: Backoff | None = None) -> None:
        """`limit` None: never give up (a person's screen waits for the platform to be back as
        long as the person does; they can quit)."""
        self.limit = limit
        self.backoff = backoff or Backoff()
        self.failures = 0

    @property
    def exhausted(self) -> bool:
        """As many consecutive failures as allowed: the next one is final."""
        return self.limit is not None and self.failures >= self.limit

    async def failed(self) -> None:
        """Count a failure and wait the backoff before the next attempt."""
        self.failures += 1
        await asyncio.sleep(self.backoff.delay(self.failures))

    def reset(self) -> None:
        """The stream delivered again: later failures start from the first delay."""
        self.failures = 0


class Link:
    """Whether a resuming stream is connected, told to its caller once per change (a screen says
    "Reconnecting…" on the first failure, not on each retry, and "connected again" once)."""

    def __init__(self, on_connection: Callable[[bool], Awaitable[None]] | None) -> None:
        self.on_connection = on_connection
        self.lost = False

    async def down(self) -> None:
        if not self.lost:
            self.lost = True
            if self.on_connection is not None:
                await self.on_connection(False)

    async def up(self) -> None:
        if self.lost:
            self.lost = False
            if self.on_connection is not None:
                await self.on_connection(True)


def retried_methods() -> list[dict[str, str]]:
    """Every unary method of the public and staff APIs that is safe to repeat, as service-config names."""
    names = []
    for module in (play_pb2, tournaments_pb2, bots_pb2, safety_pb2, challenges_pb2, social_pb2, notices_pb2, admin_pb2):
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                if method.client_streaming or method.server_streaming or method.name in NOT_IDEMPOTENT:
                    continue
                names.append({"service": service.full_name, "method": method.name})
    return names


def service_config(backoff: Backoff | None = None) -> str:
    """The channel's service config (JSON): the retry policy for the unary methods."""
    policy = backoff or Backoff()
    return json.dumps(
        {
            "methodConfig": [
                {
                    "name": retried_methods(),
                    "retryPolicy": {
                        "maxAttempts": UNARY_ATTEMPTS,
                        "initialBackoff": f"{policy.first_s}s",
                        "maxBackoff": f"{policy.cap_s}s",
                        "backoffMultiplier": policy.factor,
                        "retryableStatusCodes": [code.name for code in RETRYABLE],
                    },
                }
            ]
        }
    )
