"""How every timestamp is written on the wire: ISO 8601 UTC with microseconds and `Z`."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache

# What a field that takes a time accepts, as every refusal of one says it.
TIMESTAMP_ACCEPTED = "an ISO 8601 UTC timestamp such as 2026-11-28T09:00:00Z"


# Answers format the same stored times over and over (a run's answer has dozens, read again on every GET):
# a hit costs a twentieth of formatting. Bounded, so a stream of new times only recycles entries.
@lru_cache(maxsize=32_768)
def format_timestamp(value: datetime) -> str:
    """`2026-11-22T01:27:24.123456Z`, the one spelling DESIGN.md fixes for times and versions."""
    # isoformat() is C-fast where strftime() parses its format each call; the spelling is the same.
    if value.tzinfo is UTC:
        # What PostgreSQL gives for every `timestamptz`: only the "+00:00" suffix to swap (half the cost,
        # and a run's answer formats a few dozen of them).
        return value.isoformat(timespec="microseconds")[:-6] + "Z"
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def timestamp(value: datetime | None) -> str | None:
    """`format_timestamp`, passing None through (for optional times)."""
    return format_timestamp(value) if value is not None else None
