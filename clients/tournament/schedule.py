"""Who plays whom, on which deal, in which seat.

A *lineup* is the bots at one table.  Schedules:

* ``round-robin``: every combination of ``seats`` distinct bots of the pool (with a
  pool smaller than the table, the pool is repeated to fill it);
* ``gauntlet``: the first bot against each other bot, which fills the other seats;
* ``substitution``: the first bot is the *reference*; per deal, one game of the
  reference in every seat, then, for each other bot (a *candidate*), one game per
  seat with the candidate in that seat and the reference in all the others.  A
  candidate's score in seat s against the reference's own score in seat s of the
  reference game is a paired difference with nothing else changed: no third bot
  sits next to anyone, so seat order cannot matter (:func:`.stats.substitution_pairs`);
* ``mutual-substitution`` (two bots, what ``--sprt`` plays): the substitution design
  both ways, per deal each bot's own game then the other in each of its seats, the
  pair in name order whichever way it was given, so that the games, and their bot
  seeds, do not depend on which bot is named first (``order`` is the family: 0 for the
  first bot's own games and the second among them, 1 the other way round).

Duplicate deals: deal ``d`` has one seed (``deal_seed(seed, d)``), the same for every
lineup, and the games of one (lineup, deal) form a *deal set*, scored together.  In
round-robin and gauntlet lineups every bot plays every seat's hand of the deal: the
lineup is played in every rotation (rotation ``r`` puts lineup bot ``(s + r) % n`` in
seat ``s``), and with ``seating="balanced"`` (the default) in every *cyclic order*
of the lineup too.  Rotations alone keep each bot right after the same neighbour,
which in contract (where sitting after a weak player is worth 20-40 points a game)
decides rankings; every cyclic order gives each bot each neighbour equally often.
A lineup of ``n`` distinct bots has ``(n-1)!`` cyclic orders (a 2-seat table one, a
4-bot contract table six); ``seating="cyclic"`` plays the lineup's own order only.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import combinations, permutations

MUTUAL_SUBSTITUTION = "mutual-substitution"
SCHEDULES = ("round-robin", "gauntlet", "substitution", MUTUAL_SUBSTITUTION)
SEATINGS = ("balanced", "cyclic")


@dataclass(frozen=True, slots=True)
class GameSpec:
    index: int  # position in the schedule
    lineup: tuple[str, ...]
    lineup_index: int
    deal: int
    rotation: int  # substitution: the candidate's seat (0 in the reference game)
    seats: tuple[str, ...]  # the bot in each seat
    seed: bytes  # the deal's game seed
    order: int = 0  # which cyclic order of the lineup (0: its own order); mutual: family
    # substitution schedules: True for the reference game (the reference in every seat)
    reference: bool = False

    @property
    def deal_set(self) -> tuple[int, int]:
        return (self.lineup_index, self.deal)

    def bot_seed(self, tournament_seed: int, seat: int) -> int:
        text = f"bot:{tournament_seed}:{self.lineup_index}:{self.deal}:{self.rotation}:{seat}"
        if self.order:
            text += f":order{self.order}"
        if self.reference:
            text += ":reference"
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def deal_seed(tournament_seed: int, deal: int) -> bytes:
    return hashlib.sha256(f"glintwick-deal:{tournament_seed}:{deal}".encode()).digest()[:16]


def lineups(bots: list[str], seats: int, schedule: str) -> list[tuple[str, ...]]:
    if len(bots) < 2:
        raise ValueError("a tournament needs at least two bots")
    if schedule == "round-robin":
        if len(bots) >= seats:
            return [tuple(c) for c in combinations(bots, seats)]
        pool = (bots * seats)[:seats]
        return [tuple(pool)]
    if schedule in ("gauntlet", "substitution"):
        head, rest = bots[0], bots[1:]
        return [(head, *([other] * (seats - 1))) for other in rest]
    raise ValueError(f"unknown schedule {schedule!r}; known: {', '.join(SCHEDULES)}")


def rotate(lineup: tuple[str, ...], rotation: int) -> tuple[str, ...]:
    n = len(lineup)
    return tuple(lineup[(s + rotation) % n] for s in range(n))


def cyclic_orders(lineup: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every arrangement of the lineup's bots up to rotation, once each: the lineup's own
    order first, then the others in a fixed order (each as its least rotation)."""

    def least(order: tuple[str, ...]) -> tuple[str, ...]:
        return min(rotate(order, r) for r in range(len(order)))

    own = least(lineup)
    others = sorted({least(p) for p in permutations(lineup)} - {own})
    return [lineup, *others]


def games(
    bots: list[str],
    seats: int,
    deals: int,
    seed: int,
    schedule: str = "round-robin",
    first_deal: int = 0,
    seating: str = "balanced",
) -> list[GameSpec]:
    """Every game of the tournament, deal set by deal set."""
    if seating not in SEATINGS:
        raise ValueError(f"unknown seating {seating!r}; known: {', '.join(SEATINGS)}")
    if schedule == "substitution":
        return _substitution(bots, seats, deals, seed, first_deal)
    if schedule == MUTUAL_SUBSTITUTION:
        return _mutual_substitution(bots, seats, deals, seed, first_deal)
    out: list[GameSpec] = []
    for li, lineup in enumerate(lineups(bots, seats, schedule)):
        orders = cyclic_orders(lineup) if seating == "balanced" else [lineup]
        for deal in range(first_deal, first_deal + deals):
            for order, arranged in enumerate(orders):
                for rotation in range(seats):
                    out.append(
                        GameSpec(
                            len(out),
                            lineup,
                            li,
                            deal,
                            rotation,
                            rotate(arranged, rotation),
                            deal_seed(seed, deal),
                            order,
                        )
                    )
    return out


def _substitution(
    bots: list[str], seats: int, deals: int, seed: int, first_deal: int
) -> list[GameSpec]:
    """Per deal and candidate: the reference game, then the candidate in each seat.  (The
    reference game is played once per candidate, so that each candidate's deal set is
    whole in itself: a shard or an SPRT can take it alone.)"""
    reference, candidates = bots[0], bots[1:]
    if not candidates:
        raise ValueError("a substitution tournament needs a reference and a candidate")
    if reference in candidates:
        raise ValueError(f"the reference {reference!r} cannot be a candidate too")
    out: list[GameSpec] = []
    for li, candidate in enumerate(candidates):
        lineup = (reference, candidate)
        for deal in range(first_deal, first_deal + deals):
            game_seed = deal_seed(seed, deal)
            out.append(
                GameSpec(len(out), lineup, li, deal, 0, (reference,) * seats, game_seed, 0, True)
            )
            for seat in range(seats):
                arranged = tuple(candidate if s == seat else reference for s in range(seats))
                out.append(GameSpec(len(out), lineup, li, deal, seat, arranged, game_seed))
    return out


def _mutual_substitution(
    bots: list[str], seats: int, deals: int, seed: int, first_deal: int
) -> list[GameSpec]:
    """Per deal, for each bot of the pair (in name order) as the reference: its own game,
    then the other bot in each seat.  Every game of a deal is one deal set."""
    if len(bots) != 2 or bots[0] == bots[1]:
        raise ValueError(f"a mutual substitution is of two different bots, not {bots!r}")
    pair = (min(bots), max(bots))
    out: list[GameSpec] = []
    for deal in range(first_deal, first_deal + deals):
        game_seed = deal_seed(seed, deal)
        for family, (reference, candidate) in enumerate((pair, pair[::-1])):
            out.append(
                GameSpec(len(out), pair, 0, deal, 0, (reference,) * seats, game_seed, family, True)
            )
            for seat in range(seats):
                arranged = tuple(candidate if s == seat else reference for s in range(seats))
                out.append(GameSpec(len(out), pair, 0, deal, seat, arranged, game_seed, family))
    return out
