"""Housekeeping activities: retention of idempotency records."""

from __future__ import annotations

from temporalio import activity

from groundwork.persistence.repositories import idempotency


@activity.defn(name="purge_expired_idempotency_keys")
async def purge_expired_idempotency_keys() -> int:
    """Delete idempotency records past their 24 h retention; returns how many went."""
    removed = await idempotency.purge_expired()
    activity.logger.info("purged %d expired idempotency records", removed)
    return removed
