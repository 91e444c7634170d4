"""The contract solver: which melds a hand lays for its round's contract.

This is the engine's hot path (bots and load tests ask it on every turn), so it
never looks at physical cards until the very end.  A hand becomes:

* unary bit-planes over the 52 natural kinds (bit ``suit * 13 + rank - 1``, the
  deck-0 card id): plane *i* holds the kinds of which the hand has more than *i*
  copies, so "does this run fit" is one AND and "take it" a few ANDs/ORs;
* a joker count.

A run is searched as a *skeleton*: the natural positions it uses in one suit
(positions 1..14, 14 being an ace above the king); the jokers it needs and may
take follow from the skeleton's span.  A set is searched in count space (rank,
number of naturals): once the runs are fixed every natural of a rank is as good
as any other for a set, except for card ids, and ids are only looked at when two
selections tie on points and jokers, and to build the answer.  Everything is
driven by the RuleSet's fields (sizes exact or minimum, set limits and suits,
ace high, jokers per meld, naturals per meld, penalties), never by its name.

Optimality (RULES.md, "The solver"): most penalty points laid, then fewest
jokers, then the smallest sorted list of physical card ids.  Where the same
cards can be split into the contract's melds in several ways (which meld gets a
spare joker, which of two twin runs gets the deck-0 copies, whether 9C tops the
sequence or completes the group), the engine takes the split whose melds, read
in contract order, have the smallest sorted id lists; see ``BestSoFar.split``
(best_so_far.py).

``missing_cards`` and ``analyse`` answer "how many cards short, and which help"
with a second branch and bound (cost_search.py, cost_leaves.py).

Nothing is cached between calls except tables derived from a rule set: penalty
tables, the contract's requirement lists, and (filled as hands ask, bounded)
the run skeletons of one suit's positions and the splits of one rank's counts
over several sets.  Each is a function of the rule set and a few small numbers,
never of a whole hand, so every call still does its own search
(``best_selections_without``, one hand less each of several card types, reads the
hand once and searches one tree for all the natural types, within the call).

Speed: the modules are plain typed Python written to compile well with mypyc
(setup.py builds them in place as one group; ``SOLVER_FORM`` says which form
runs and why, ``COMPILED`` whether it is the compiled one: loading.py).  Hot
recursions are methods with int arguments rather than closures, skeletons are
small classes rather than tuples, and kind sets are bit masks: compiled, those
run unboxed.  The interpreted source gives identical answers
(tests/unit/test_solver_build.py).

The modules, each building on the ones above it:

* ``values``: Selection and Analysis, the answers;
* ``planes``: a hand as bit planes and the counts read from them;
* ``card_ids``: physical card ids as masks, looked at only when ids decide;
* ``tables``: what the solver derives from a rule set, kept per rule set;
* ``skeletons``: the run skeletons both searches try;
* ``best_so_far``: the best selection found so far and rule 3's id order;
* ``best_search``: the branch and bound for the best selection;
* ``meld_building``: the Melds of the chosen selection;
* ``cost_leaves``: the cost of a complete choice of melds in the missing-cards
  search, and the outs it leaves open;
* ``cost_search``: the branch and bound over those choices;
* ``answers``: the public functions.
"""

from __future__ import annotations

from pathlib import Path

from engine.solver.loading import COMPILED as _COMPILED_FORM
from engine.solver.loading import choose_form

# Decided before any solver module loads (they load below): "compiled", or
# "pure: " and why the source runs instead.
SOLVER_FORM: str = choose_form(__name__, Path(__file__).resolve().parent)
# True when the compiled build runs
COMPILED: bool = SOLVER_FORM == _COMPILED_FORM

from .answers import (  # noqa: E402
    JOKER_TYPE,
    analyse,
    best_selection,
    best_selections_without,
    can_lay,
    missing_cards,
)
from .values import Analysis, Selection  # noqa: E402

__all__ = [
    "COMPILED",
    "JOKER_TYPE",
    "SOLVER_FORM",
    "Analysis",
    "Selection",
    "analyse",
    "best_selection",
    "best_selections_without",
    "can_lay",
    "missing_cards",
]
