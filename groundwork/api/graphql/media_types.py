"""GraphQL over HTTP's response media types: `application/graphql-response+json` for a client whose `Accept`
prefers it, with the spec's status codes (a request error, such as a document that does not parse or validate,
is 4xx with no `data`; a request whose execution began is 200); `application/json` for everyone else, as before
(every GraphQL answer 200)."""

from __future__ import annotations

GRAPHQL_RESPONSE = "application/graphql-response+json"
JSON = "application/json"


def _ranges(accept: str) -> list[tuple[str, float]]:
    ranges = []
    for part in accept.split(","):
        media, *parameters = (p.strip() for p in part.split(";"))
        quality = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if media:
            ranges.append((media.lower(), quality))
    return ranges


def _quality(media_type: str, ranges: list[tuple[str, float]]) -> tuple[float, int]:
    """How much the client wants `media_type`: the quality of the most specific range that covers it, and
    that range's position (earlier wins a tie)."""
    kind = media_type.split("/")[0]
    best: tuple[int, float, int] = (-1, 0.0, 0)
    for position, (media, quality) in enumerate(ranges):
        specificity = 2 if media == media_type else 1 if media == f"{kind}/*" else 0 if media == "*/*" else -1
        if specificity > best[0]:
            best = (specificity, quality, position)
    return (best[1], -best[2]) if best[0] >= 0 else (0.0, 0)


def prefers_graphql_response(accept: str | None) -> bool:
    """True when `Accept` ranks `application/graphql-response+json` above `application/json` (by quality,
    then by the order the client listed them); no `Accept`, or a tie on a wildcard, keeps `application/json`."""
    if not accept:
        return False
    ranges = _ranges(accept)
    wanted, legacy = _quality(GRAPHQL_RESPONSE, ranges), _quality(JSON, ranges)
    if wanted[0] <= 0:
        return False
    named = any(media == GRAPHQL_RESPONSE for media, _ in ranges)
    return named and wanted > legacy
