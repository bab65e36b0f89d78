"""REST answers of the liveness and readiness probes."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from groundwork.api.rest.documents.common import DEPRECATED, Resource


class Liveness(Resource, kw_only=True):
    """The process is up."""

    status: str


class IndexLagStatus(Resource, kw_only=True):
    """How far one index of this process's replica is behind the head of its change log."""

    applied_seq: int
    head_seq: int
    changes_behind: int
    seconds_behind: float
    legacy_applied_seq: Annotated[int, DEPRECATED] = msgspec.field(name="applied_seq")
    legacy_head_seq: Annotated[int, DEPRECATED] = msgspec.field(name="head_seq")
    legacy_changes_behind: Annotated[int, DEPRECATED] = msgspec.field(name="changes_behind")
    legacy_seconds_behind: Annotated[float, DEPRECATED] = msgspec.field(name="seconds_behind")


class ReplicaStatus(Resource, kw_only=True):
    """This process's search replica: whether it has caught up since start, and its lag per index."""

    replica_ready: bool
    indexes: dict[str, IndexLagStatus]
    legacy_replica_ready: Annotated[bool, DEPRECATED] = msgspec.field(name="replica_ready")


class Readiness(Resource, kw_only=True):
    """Whether PostgreSQL, Temporal and this process's search replica are ready, each named in `checks`."""

    status: str
    checks: dict[str, str]
    search: ReplicaStatus | UnsetType = UNSET
