"""Which edges are guesses: a call or base edge below :data:`CONFIDENT` had its target
guessed from a name alone (``obj.get()`` with nothing known of ``obj``). Such edges stay in
the graph for exploration and retrieval, but centrality (most connected, communities,
connectivity) and impact analysis leave them out. EXPLAINS confidences are another scale
(the doc binder's) and are never guesses in this sense.

Kept apart from :mod:`.edges` so that readers (``query``) need not import the resolver.
"""

from __future__ import annotations

from .kinds import GUESSABLE_EDGES, sql_list

__all__ = ["CONFIDENT", "GUESS", "NOT_GUESSED", "is_guess"]

CONFIDENT = 0.5
GUESS = 0.3  # the confidence the resolver gives a guess
# the same rule in SQL, over the columns of ``edges``
NOT_GUESSED = f"NOT (kind IN {sql_list(GUESSABLE_EDGES)} AND confidence < {CONFIDENT})"


def is_guess(kind: str, confidence: float | None) -> bool:
    """A call or base edge whose target was guessed from a name alone."""
    return kind in ("CALLS", "INHERITS") and confidence is not None and confidence < CONFIDENT
