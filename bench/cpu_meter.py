"""CPU seconds used by processes of a bench (from /proc), shared by the benches that report CPU.

A process's figure covers all its threads (Tantivy's indexing threads count with the process that started
them); a group may include its processes' children (PostgreSQL: the postmaster and its backends).
"""

from __future__ import annotations

import os
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int, *, reaped: bool = False) -> float:
    """User + system CPU seconds a process has used so far (0 when it is gone); with `reaped`, plus those of its
    children that have ended and that it has waited for (PostgreSQL's parallel workers, closed backends)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if reaped:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / _TICK


def children_of(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return found


class CpuMeter:
    """CPU seconds per component between two snapshots (PostgreSQL: the postmaster and its backends)."""

    def __init__(self, groups: dict[str, list[int]], with_children: set[str]) -> None:
        self.groups = groups
        self.with_children = with_children

    def snapshot(self) -> dict[str, float]:
        """CPU seconds used so far by each group."""
        totals = {}
        for name, pids in self.groups.items():
            members = list(pids)
            if name in self.with_children:
                members += [c for p in pids for c in children_of(p)]
            totals[name] = sum(cpu_of(p) for p in members)
        return totals
