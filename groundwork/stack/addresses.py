"""Where a running `groundwork up` listens, recorded in its data dir so every CLI command given that data dir
(or run from it) reaches the same stack whatever ports `up` chose."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

FILE_NAME = "stack.json"


@dataclass(frozen=True)
class StackAddresses:
    """The addresses of one running `up`, and its process id (a record whose process is gone is stale)."""

    api: str
    internal_api: str
    temporal: str
    temporal_namespace: str
    temporal_task_queue: str
    temporal_ui: str
    worker_metrics: str
    pid: int


def record_addresses(data_dir: Path, addresses: StackAddresses) -> None:
    """Write the addresses atomically (a reader never sees half a file)."""
    path = data_dir / FILE_NAME
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(asdict(addresses), indent=2) + "\n", encoding="utf-8")
    partial.replace(path)


def forget_addresses(data_dir: Path, pid: int) -> str:
    """Remove the record when the `up` that wrote it stops; says what it did."""
    found = recorded_addresses(data_dir, require_running=False)
    if found is not None and found.pid == pid:
        (data_dir / FILE_NAME).unlink(missing_ok=True)
    return f"{FILE_NAME} removed"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recorded_addresses(data_dir: Path, *, require_running: bool = True) -> StackAddresses | None:
    """The addresses recorded by the `up` of this data dir while it runs, else None."""
    try:
        raw = json.loads((data_dir / FILE_NAME).read_text(encoding="utf-8"))
        addresses = StackAddresses(**raw)
    except (OSError, ValueError, TypeError):
        return None
    if require_running and not _running(addresses.pid):
        return None
    return addresses
