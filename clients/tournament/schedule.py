"""Who plays whom, on which deal, in which seat.

A *lineup* is the bots at one table (seat order before rotation).  Schedules:

* ``round-robin``: every combination of ``seats`` distinct bots of the pool (with a
  pool smaller than the table, the pool is repeated to fill it);
* ``gauntlet``: the first bot against each other bot, which fills the other seats.

Duplicate deals: deal ``d`` has one seed (``deal_seed(seed, d)``), the same for every
lineup, and is played once per seat rotation — rotation ``r`` puts lineup bot
``(s + r) % n`` in seat ``s`` — so every bot of a lineup plays every seat's hand of
every deal.  The ``n`` games of one (lineup, deal) are a *deal set*, scored together.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import combinations

SCHEDULES = ("round-robin", "gauntlet")


@dataclass(frozen=True, slots=True)
class GameSpec:
    index: int  # position in the schedule
    lineup: tuple[str, ...]
    lineup_index: int
    deal: int
    rotation: int
    seats: tuple[str, ...]  # the bot in each seat
    seed: bytes  # the deal's game seed

    @property
    def deal_set(self) -> tuple[int, int]:
        return (self.lineup_index, self.deal)

    def bot_seed(self, tournament_seed: int, seat: int) -> int:
        text = f"bot:{tournament_seed}:{self.lineup_index}:{self.deal}:{self.rotation}:{seat}"
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
    if schedule == "gauntlet":
        head, rest = bots[0], bots[1:]
        return [(head, *([other] * (seats - 1))) for other in rest]
    raise ValueError(f"unknown schedule {schedule!r}; known: {', '.join(SCHEDULES)}")


def rotate(lineup: tuple[str, ...], rotation: int) -> tuple[str, ...]:
    n = len(lineup)
    return tuple(lineup[(s + rotation) % n] for s in range(n))


def games(
    bots: list[str],
    seats: int,
    deals: int,
    seed: int,
    schedule: str = "round-robin",
    first_deal: int = 0,
) -> list[GameSpec]:
    """Every game of the tournament, deal set by deal set."""
    out: list[GameSpec] = []
    for li, lineup in enumerate(lineups(bots, seats, schedule)):
        for deal in range(first_deal, first_deal + deals):
            for rotation in range(seats):
                out.append(
                    GameSpec(
                        len(out),
                        lineup,
                        li,
                        deal,
                        rotation,
                        rotate(lineup, rotation),
                        deal_seed(seed, deal),
                    )
                )
    return out
