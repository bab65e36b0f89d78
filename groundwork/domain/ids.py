"""Resource identifiers: a type prefix followed by a ULID, as DESIGN.md fixes them."""

from __future__ import annotations

import base64
import os
import time

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
        "imp",
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
        # Notifications and messaging: audit records, change proposals, connected apps, snoozes.
        "aud",
        "ncp",
        "app",
        "snz",
    }
)


def new_id(prefix: str) -> str:
    """Return a new id such as `wi_01JD...` for a known prefix."""
    if prefix not in PREFIXES:
        raise ValueError(f"unknown id prefix {prefix!r}")
    return f"{prefix}_{ULID()}"


# Crockford's base32 (a ULID's alphabet) in place of RFC 4648's, for `bytes.translate`.
_CROCKFORD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", b"0123456789ABCDEFGHJKMNPQRSTVWXYZ")


def new_ids(prefix: str, count: int) -> list[str]:
    """`count` new ids for one prefix, in increasing order: one clock reading and one random draw for all.

    The ULIDs share their millisecond and count up from a random 80-bit start (as ULID's monotonic
    generation does within a millisecond); a batch costs about a fifth of `count` calls of `new_id` (an ingest
    makes one per passage)."""
    if prefix not in PREFIXES:
        raise ValueError(f"unknown id prefix {prefix!r}")
    start = int.from_bytes(os.urandom(10), "big")
    if start + count >= 1 << 80:
        start -= count  # stay within the randomness field instead of carrying into the timestamp
    # A ULID is 10 base32 digits of its 48-bit millisecond (two zero bits on top), then 16 of its 80 random
    # bits: ten bytes each way, whose RFC 4648 base32 is 16 digits with no padding.
    millisecond = time.time_ns() // 1_000_000
    head = prefix + "_" + _crockford((millisecond << 30).to_bytes(10, "big"))[:10]
    tails = _crockford(b"".join(value.to_bytes(10, "big") for value in range(start, start + count)))
    return [head + tails[i : i + 16] for i in range(0, 16 * count, 16)]


def _crockford(raw: bytes) -> str:
    return base64.b32encode(raw).translate(_CROCKFORD).decode()


# The prefix of the id of each kind of subject a read may name.
SUBJECT_PREFIXES = {"project": "prj", "engagement": "eng", "portfolio": "pf", "work_item": "wi"}
_EXAMPLE_ULID = "01JD8X3Q5K7M2N4P6R8S0T2V4W"
# Every id this API issues is a prefix, `_` and 26 characters; anything far longer is not one of them.
MAX_ID_LENGTH = 200


def id_like(prefix: str | None) -> str:
    """How a refusal says what an id looks like: `an id like prj_01JD8X3Q5K7M2N4P6R8S0T2V4W`."""
    return f"an id like {prefix or 'prj'}_{_EXAMPLE_ULID}"


def cannot_be_an_id(value: str | None) -> bool:
    """Whether `value` cannot be any id at all: blank, holding a control character, or far too long."""
    return value is not None and (
        not value.strip() or len(value) > MAX_ID_LENGTH or any(ord(c) < 32 or c == "\x7f" for c in value)
    )
