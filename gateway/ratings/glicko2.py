"""Glicko-2, exactly as in Mark Glickman's "Example of the Glicko-2 system" (2013), plus how tafel
applies it to online play and to games with more than two seats. Pure: no I/O.

The paper's steps, in its notation (the Glicko-2 scale: mu = (r - 1500) / 173.7178, phi = RD / 173.7178):

1. g(phi) = 1 / sqrt(1 + 3 phi^2 / pi^2); E = 1 / (1 + exp(-g(phi_j) (mu - mu_j))).
2. v = 1 / sum(g^2 E (1 - E)); delta = v sum(g (s - E)).
3. The new volatility sigma' solves f(x) = 0 by the Illinois algorithm (convergence 0.000001), with
   f(x) = e^x (delta^2 - phi^2 - v - e^x) / (2 (phi^2 + v + e^x)^2) - (x - ln sigma^2) / tau^2.
4. phi* = sqrt(phi^2 + sigma'^2); phi' = 1 / sqrt(1 / phi*^2 + 1 / v); mu' = mu + phi'^2 sum(g (s - E)).
A player who did not play in a period keeps rating and volatility; phi' = sqrt(phi^2 + sigma^2).

How tafel uses it:

- **Every game is its own rating period** (as lichess does): the update runs when the game ends,
  against the opponents' ratings as they were when it ended. Between games, RD grows with the time
  since the player's last rated game (`age`: one period of growth per RATING_PERIOD_DAYS), capped at
  the starting RD, so a player who has been away is again less certain.
- **Multi-seat games rate by finishing order.** A table of n seats counts, for each seat, as n - 1
  games played at once in one period: against each other seat a win (ranked better), a loss (ranked
  worse) or a draw (same rank), all against the opponents' pre-game ratings. This is the common
  pairwise decomposition of a free-for-all result; a player at a bigger table plays more "games" in
  that period, which is why the platform may keep separate pools per table-size class.
- **Provisional** while RD > PROVISIONAL_RD (110, lichess's threshold): shown as such and kept off
  the default leaderboards.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCALE = 173.7178
DEFAULT_RATING = 1500.0
DEFAULT_RD = 350.0
DEFAULT_VOLATILITY = 0.06
DEFAULT_TAU = 0.5
PROVISIONAL_RD = 110.0
MAX_RD = 350.0
EPSILON = 0.000001
RATING_PERIOD_DAYS = 1.0


@dataclass(frozen=True)
class Rating:
    """A player's rating on the Glicko scale (rating, RD) with the Glicko-2 volatility."""

    rating: float = DEFAULT_RATING
    rd: float = DEFAULT_RD
    volatility: float = DEFAULT_VOLATILITY

    @property
    def mu(self) -> float:
        return (self.rating - DEFAULT_RATING) / SCALE

    @property
    def phi(self) -> float:
        return self.rd / SCALE

    @classmethod
    def from_glicko2(cls, mu: float, phi: float, volatility: float) -> Rating:
        return cls(mu * SCALE + DEFAULT_RATING, phi * SCALE, volatility)

    def provisional(self, threshold: float = PROVISIONAL_RD) -> bool:
        return self.rd > threshold


def g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-g(phi_j) * (mu - mu_j)))


def _volatility(phi: float, sigma: float, v: float, delta: float, tau: float) -> float:
    """Step 5 of the paper: the Illinois algorithm for the new volatility."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        num = ex * (delta * delta - phi * phi - v - ex)
        den = 2.0 * (phi * phi + v + ex) ** 2
        return num / den - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def update(player: Rating, results: Sequence[tuple[Rating, float]], *, tau: float = DEFAULT_TAU) -> Rating:
    """The player's rating after one rating period with these (opponent, score) results, scores
    1 for a win, 0.5 for a draw, 0 for a loss. No results: only RD grows (step 6 alone)."""
    mu, phi, sigma = player.mu, player.phi, player.volatility
    if not results:
        return Rating.from_glicko2(mu, min(math.sqrt(phi * phi + sigma * sigma), MAX_RD / SCALE), sigma)
    v_inverse = 0.0
    improvement = 0.0
    for opponent, score in results:
        g_j = g(opponent.phi)
        e_j = expected(mu, opponent.mu, opponent.phi)
        v_inverse += g_j * g_j * e_j * (1.0 - e_j)
        improvement += g_j * (score - e_j)
    v = 1.0 / v_inverse
    delta = v * improvement
    sigma_new = _volatility(phi, sigma, v, delta, tau)
    phi_star = math.sqrt(phi * phi + sigma_new * sigma_new)
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu_new = mu + phi_new * phi_new * improvement
    return Rating.from_glicko2(mu_new, phi_new, sigma_new)


def age(player: Rating, periods: float, *, max_rd: float = MAX_RD) -> Rating:
    """RD growth over `periods` rating periods without games: phi^2 + periods * sigma^2, capped."""
    if periods <= 0:
        return player
    phi = math.sqrt(player.phi**2 + periods * player.volatility**2)
    return Rating(player.rating, min(phi * SCALE, max_rd), player.volatility)


def pair_score(rank: int, other_rank: int) -> float:
    """One seat's score against another from competition ranks (1 = best)."""
    if rank < other_rank:
        return 1.0
    if rank > other_rank:
        return 0.0
    return 0.5


def rate_table(ratings: Sequence[Rating], ranks: Sequence[int], *, tau: float = DEFAULT_TAU) -> list[Rating]:
    """New ratings for every seat of one finished game from its competition ranks: each seat plays
    every other seat once in this period (see the module notes). Two seats: an ordinary game."""
    if len(ratings) != len(ranks):
        raise ValueError("one rank per seat")
    out: list[Rating] = []
    for i, player in enumerate(ratings):
        results = [(ratings[j], pair_score(ranks[i], ranks[j])) for j in range(len(ratings)) if j != i]
        out.append(update(player, results, tau=tau))
    return out
