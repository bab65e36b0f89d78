"""Action links in e-mail and chat: each is taken once, in the transaction of the command it runs."""

from __future__ import annotations

from datetime import datetime

from groundwork.persistence import db


async def claim_action_link(link_id: str, notification_id: str, expires_at: datetime) -> bool:
    """Take an action link for use (in the transaction of its command); False if it was used before.

    A concurrent use of the same link waits on this row and then finds it taken, or free again if the
    first use rolled back.
    """
    row = await db.fetchrow(
        "INSERT INTO notification_action_redemptions (link_id, notification_id, expires_at) VALUES ($1, $2, $3)"
        " ON CONFLICT (link_id) DO NOTHING RETURNING link_id",
        link_id,
        notification_id,
        expires_at,
    )
    return row is not None


async def action_link_used(link_id: str) -> bool:
    """Whether an action link was used already."""
    return await db.fetchrow("SELECT 1 FROM notification_action_redemptions WHERE link_id = $1", link_id) is not None


async def record_action_link_operation(link_id: str, operation_id: str) -> None:
    """Note which operation an action link ran."""
    await db.execute(
        "UPDATE notification_action_redemptions SET operation_id = $2 WHERE link_id = $1", link_id, operation_id
    )
