"""The demo's data: one JSON Lines file per kind of record in `data/`, read as a user's files are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).parent / "data"


def lines(kind: str) -> list[str]:
    """The lines of `data/<kind>.jsonl`, as a command reading that file would get them."""
    return (DATA_DIR / f"{kind}.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def records(kind: str) -> list[dict[str, Any]]:
    """The records of `data/<kind>.jsonl`, in file order (the order they are created in)."""
    return [json.loads(line) for line in lines(kind) if line.strip()]


# The demo has one workspace; every step of the seed finds it by this slug.
WORKSPACE_SLUG: str = records("workspaces")[0]["slug"]
