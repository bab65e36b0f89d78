"""Several searches for one work item, fused into one ranking (reciprocal rank fusion).

The whole item asked as one question lets a long description outvote its title: the passages that share
most of its incidental words ("last month", "by hand", "weeks late") rank above the pages about its topic.
The title is searched on its own too, and a passage ranks by the sum of `1 / (K + rank)` over the rankings
it is in: high in either is enough, high in both is best.
"""

from __future__ import annotations

# Small, so the top of a ranking counts: with 48 hits a ranking, the first weighs five times the last, and
# the fused scores keep enough spread for the pages they lead to be told apart (`neighbourhood.leading_pages`).
K = 10


def fused(rankings: list[list[str]], k: int = K) -> list[tuple[str, float]]:
    """Each id once with its fused score, best first (ties by id, so the same rankings give the same order)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, found in enumerate(ranking):
            scores[found] = scores.get(found, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
