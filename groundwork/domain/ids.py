"""Resource identifiers: a type prefix followed by a ULID, as DESIGN.md fixes them."""

from __future__ import annotations

from ulid import ULID

PREFIXES = frozenset(
    {
        "ws",
        "prn",
        "key",
        "pf",
        "eng",
        "prj",
        "wi",
        "wie",
        "draft",
        "art",
        "apply",
        "notification",
        "thread",
        "msg",
        "op",
        "evt",
        "whe",
        "whd",
        "pkg",
        "ev",
        "prov",
        "src",
        "psg",
        "srcv",
        # Notifications and messaging: audit records, change proposals, connected apps.
        "aud",
        "ncp",
        "app",
    }
)


def new_id(prefix: str) -> str:
    """Return a new id such as `wi_01JD...` for a known prefix."""
    if prefix not in PREFIXES:
        raise ValueError(f"unknown id prefix {prefix!r}")
    return f"{prefix}_{ULID()}"
