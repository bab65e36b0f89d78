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
    """Each id once with its fused score, best first; equal scores by their best rank, then by
    which ranking holds it (the whole item's first).

    Ties are common (rank r in one ranking only, against rank r in another only) and never broken by id: ids
    are minted at ingestion, so the same corpus ingested again would otherwise gather different evidence."""
    scores: dict[str, float] = {}
    first_seen: dict[str, tuple[int, int]] = {}
    for which, ranking in enumerate(rankings):
        for rank, found in enumerate(ranking):
            scores[found] = scores.get(found, 0.0) + 1.0 / (k + rank)
            first_seen[found] = min(first_seen.get(found, (rank, which)), (rank, which))
    return sorted(scores.items(), key=lambda pair: (-pair[1], first_seen[pair[0]]))
