"""Notifications on the embedded stack: fan-out of one event to 1,000 recipients, and the inbox list at 100,000.

Starts what `groundwork up` starts — the embedded PostgreSQL, the Temporal dev server (SQLite, WAL)
and the worker process (Temporal worker + outbox relay) — plus an SMTP server (aiosmtpd) on
127.0.0.1 in this process, then measures in one run:

1. **Fan-out**: a work item in one project watched by 999 members, an enhancement run requested by a
   1,000th; one `work_item_enhancement.applied` event is committed to the outbox the way the apply
   activity commits it. Measured from the commit returning: until all 1,000 in-app notifications are
   committed (readable by any API process), and until the 1,000th e-mail (each recipient has
   immediate e-mail on) reached the SMTP server. Same process, same monotonic clock.
2. **Inbox list** for one principal holding 100,000 notifications: `GET /api/v1/notifications`
   against `groundwork serve` in its own process (real HTTP: auth, scope, the page, the unread
   counter, rendering), the same service function in-process, and the same query as plain SQL over
   asyncpg (the page of 21 rows, newest first by the `(recipient_id, id DESC)` index). First page,
   a deep keyset page, and the `status=unread` filter; p50 and p99 of sequential requests.

    .venv/bin/python bench/notifications_bench.py           # ~2 min
    .venv/bin/python bench/notifications_bench.py --quick   # fewer samples

Run by hand; results go to bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from aiosmtpd.controller import Controller

from groundwork.domain.ids import new_id
from groundwork.domain.pagination import encode_cursor
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import db
from groundwork.persistence.migrate import apply_migrations
from groundwork.persistence.repositories import work_items
from groundwork.persistence.repositories.enhancement import runs
from groundwork.persistence.repositories.notifications import inbox as notification_repo
from groundwork.persistence.repositories.notifications import preferences as notification_preferences
from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.notifications import inbox as service
from groundwork.services.tenancy import api_keys
from groundwork.stack.postgres import start_postgres
from groundwork.stack.temporal_dev import TemporalDevServer

RECIPIENTS = 1000
INBOX_SIZE = 100_000


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class MailCounter:
    """An SMTP server that notes when each message arrived."""

    def __init__(self) -> None:
        self.port = free_port()
        self.arrivals: list[float] = []
        self._controller = Controller(self, hostname="127.0.0.1", port=self.port)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.arrivals.append(time.perf_counter())
        return "250 accepted"

    def start(self) -> None:
        self._controller.start()

    def stop(self) -> None:
        self._controller.stop()


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99 in milliseconds."""
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))] * 1000


async def setup_fanout(workspace_id: str, recipients: int) -> tuple[str, str, str, str]:
    """A project with `recipients` members: one requested a run on a work item the others watch."""
    portfolio = await tenancy.create_portfolio(workspace_id, "Bench")
    engagement = await tenancy.create_engagement(workspace_id, portfolio.id, "Bench")
    suffix = random.randint(10, 99)
    project = await tenancy.create_project(workspace_id, engagement.id, f"B{suffix}{recipients % 97}", "Bench")
    members = []
    async with db.transaction():
        for n in range(recipients):
            principal = await tenancy.create_principal(workspace_id, f"p{suffix}-{recipients}-{n}")
            await tenancy.add_membership(principal.id, project.id, "viewer")
            await notification_preferences.save_preferences(
                principal_id=principal.id,
                workspace_id=workspace_id,
                email_enabled=True,
                email_address=f"p{n}@bench.test",
                email_digest="immediate",
                chat_enabled=False,
                chat_webhook_url=None,
                events={},
            )
            members.append(principal.id)
        applier = await tenancy.create_principal(workspace_id, f"applier-{suffix}-{recipients}", is_admin=True)
        item = await work_items.insert_work_item(
            workspace_id=workspace_id,
            project_id=project.id,
            title="Tokenise saved cards",
            status="in_progress",
            sprint=None,
            watchers=members[1:],
            fields={},
            actor_id=applier.id,
            source="bench",
        )
        run_id = new_id("wie")
        await runs.insert_run(
            run_id=run_id,
            workspace_id=workspace_id,
            project_id=project.id,
            target_id=item.id,
            actions=["description"],
            instructions="",
            requested_by=members[0],
            code_context=False,
            generator="bench",
        )
    return run_id, item.id, applier.id, project.id


async def fan_out(workspace_id: str, recipients: int, mail: MailCounter) -> tuple[float, float]:
    """Commit one applied event; seconds until every in-app notification, and every e-mail, exists."""
    run_id, item_id, applier, project_id = await setup_fanout(workspace_id, recipients)
    mails_before = len(mail.arrivals)
    now = datetime.now(UTC)
    async with db.transaction():
        event_id = await outbox.append_event(
            type="work_item_enhancement.applied",
            workspace_id=workspace_id,
            resource_type="work_item_enhancement_run",
            resource_id=run_id,
            actor_id=applier,
            payload={
                "run_id": run_id,
                "target_id": item_id,
                "applied_draft_ids": ["draft_bench"],
                "target_version": now.isoformat(),
                "applied_at": now.isoformat(),
            },
            occurred_at=now,
            project_id=project_id,
        )
    committed = time.perf_counter()
    in_app = None
    deadline = committed + 600
    while time.perf_counter() < deadline:
        row = await db.fetchrow("SELECT count(*) AS n FROM notifications WHERE event_id = $1", event_id)
        if row and row["n"] >= recipients and in_app is None:
            in_app = time.perf_counter() - committed
        if len(mail.arrivals) - mails_before >= recipients:
            break
        await asyncio.sleep(0.005)
    assert in_app is not None, "the in-app notifications never all appeared"
    arrived = mail.arrivals[mails_before:]
    assert len(arrived) >= recipients, f"only {len(arrived)} of {recipients} mails arrived"
    return in_app, max(arrived) - committed


async def fill_inbox(workspace_id: str) -> Principal:
    """One principal with 100,000 notifications (a third unread), inserted in bulk."""
    reader = await tenancy.create_principal(workspace_id, f"reader-{os.getpid()}")
    start = datetime.now(UTC) - timedelta(days=200)
    statuses = ["unread", "read", "acknowledged", "dismissed"]
    rng = random.Random(7)
    unread = 0
    for offset in range(0, INBOX_SIZE, 10_000):
        rows = []
        for i in range(offset, offset + 10_000):
            status = statuses[rng.randrange(4)] if rng.random() > 0.33 else "unread"
            unread += status == "unread"
            rows.append((new_id("notification"), f"evt_inbox_{i}", status, start + timedelta(minutes=3 * i)))
        rows.sort(key=lambda r: r[3])
        await db.execute(
            """
            INSERT INTO notifications (id, workspace_id, recipient_id, event_id, event_type, source_kind,
                source_external_id, resource_type, resource_id, title, body, status, created_at, updated_at)
            SELECT n.id, $1, $2, n.event_id, 'message.posted', 'messages', 'msg_bench', 'message_thread',
                   'thread_bench', 'New message from Maya: Settlement file timeouts',
                   'The last two nightly settlement runs hit the 30 s PSP timeout.', n.status, n.at, n.at
            FROM unnest($3::text[], $4::text[], $5::text[], $6::timestamptz[]) AS n(id, event_id, status, at)
            """,
            workspace_id,
            reader.id,
            [r[0] for r in rows],
            [r[1] for r in rows],
            [r[2] for r in rows],
            [r[3] for r in rows],
        )
    await notification_repo.adjust_unread({reader.id: unread})
    await db.execute("ANALYZE notifications")
    return Principal(reader.id, workspace_id, reader.name, "user", False, "", frozenset())


LIST_SQL = """
SELECT id, workspace_id, recipient_id, event_id, event_type, source_kind, source_external_id, resource_type,
       resource_id, title, body, status, version, created_at, updated_at
FROM notifications WHERE recipient_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR id < $3)
ORDER BY id DESC LIMIT 21
"""


async def inbox_latencies(dsn: str, workspace_slug: str, reader: Principal, samples: int) -> dict[str, Any]:
    """p50/p99 of the inbox list: REST, the service in-process, and plain SQL; three query shapes."""
    issued = await api_keys.issue_key(workspace_slug, reader.name, ["notifications:read"])
    principal = Principal(
        reader.id, reader.workspace_id, reader.name, "user", False, issued.api_key_id, frozenset({"notifications:read"})
    )
    middle = await db.fetchrow(
        "SELECT id FROM notifications WHERE recipient_id = $1 ORDER BY id DESC OFFSET 50000 LIMIT 1", reader.id
    )
    assert middle is not None
    deep_cursor = encode_cursor({"id": middle["id"]})
    shapes: dict[str, dict[str, Any]] = {
        "first page": {"params": {"limit": 20}, "status": None, "after": None},
        "page at 50,000 (keyset)": {
            "params": {"limit": 20, "cursor": deep_cursor},
            "status": None,
            "after": middle["id"],
        },
        "status=unread": {"params": {"limit": 20, "status": "unread"}, "status": "unread", "after": None},
    }
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": dsn,
        "TEMPORAL_ADDRESS": "127.0.0.1:1",
        "GROUNDWORK_RATE_LIMIT_PER_MINUTE": "100000000",
        "GROUNDWORK_SECRET_KEY": KeyRing.generate_text(),
    }
    api = subprocess.Popen(
        [sys.executable, "-m", "groundwork.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    results: dict[str, Any] = {}
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            for _ in range(300):
                try:
                    if (await http.get("/health/live")).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
            headers = {"Authorization": f"Bearer {issued.key}"}
            floors: dict[str, list[float]] = {
                "GET /health/live (no key, no SQL)": [],
                "GET /api/v1/notifications/preferences (key + 1 query)": [],
            }
            for round_ in range(samples + 50):
                for path in floors:
                    t = time.perf_counter()
                    response = await http.get(path.split()[1], headers=headers)
                    if round_ >= 50:
                        floors[path].append(time.perf_counter() - t)
                    assert response.status_code == 200
            results["floors"] = {k: percentiles(v) for k, v in floors.items()}
            for name, shape in shapes.items():
                timings: dict[str, list[float]] = {"REST": [], "service": [], "plain SQL": []}
                for round_ in range(samples + 50):
                    t = time.perf_counter()
                    response = await http.get("/api/v1/notifications", params=shape["params"], headers=headers)
                    rest = time.perf_counter() - t
                    assert response.status_code == 200 and len(response.json()["data"]) == 20, response.text
                    t = time.perf_counter()
                    await service.list_notifications(
                        principal, status=shape["status"], limit=20, cursor=shape["params"].get("cursor")
                    )
                    inproc = time.perf_counter() - t
                    t = time.perf_counter()
                    rows = await db.fetch(LIST_SQL, reader.id, shape["status"], shape["after"])
                    plain = time.perf_counter() - t
                    assert len(rows) == 21
                    if round_ >= 50:  # warm-up
                        timings["REST"].append(rest)
                        timings["service"].append(inproc)
                        timings["plain SQL"].append(plain)
                results[name] = {k: percentiles(v) for k, v in timings.items()}
    finally:
        api.terminate()
        api.wait(30)
    return results


async def bench(dsn: str, temporal_address: str, data_dir: Path, quick: bool) -> None:
    await apply_migrations(dsn)
    await db.connect(dsn, max_size=4)
    mail = MailCounter()
    mail.start()
    slug = f"bench-{os.getpid()}"
    workspace = await tenancy.create_workspace(slug, "Bench")
    env = {
        **os.environ,
        "DATABASE_URL": dsn,
        "TEMPORAL_ADDRESS": temporal_address,
        "TEMPORAL_TASK_QUEUE": "groundwork",
        "GROUNDWORK_HOME": str(data_dir),
        "GROUNDWORK_SMTP_URL": f"smtp://127.0.0.1:{mail.port}",
        "GROUNDWORK_SECRET_KEY": KeyRing.generate_text(),
    }
    log = (data_dir / "worker.log").open("wb")
    worker = subprocess.Popen(
        [sys.executable, "-m", "groundwork.worker"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        print(f"## Notifications ({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()})\n")
        warm_in_app, warm_mail = await fan_out(workspace.id, 20, mail)
        print(f"warm-up, 20 recipients: in-app {warm_in_app * 1000:.0f} ms, e-mail {warm_mail * 1000:.0f} ms\n")
        in_app, emails = await fan_out(workspace.id, RECIPIENTS, mail)
        print("| fan-out of one event | recipients | all in-app readable | all e-mails at the SMTP server |")
        print("|---|---:|---:|---:|")
        print(
            f"| `work_item_enhancement.applied` | {RECIPIENTS} | {in_app:.2f} s | {emails:.1f} s "
            f"({RECIPIENTS / emails:.0f} mails/s) |\n",
            flush=True,
        )
        started = time.perf_counter()
        reader = await fill_inbox(workspace.id)
        print(f"inbox of {INBOX_SIZE:,} notifications inserted in {time.perf_counter() - started:.1f} s\n")
        results = await inbox_latencies(dsn, slug, reader, 200 if quick else 1000)
        floors = results.pop("floors")
        print("| HTTP floor of `groundwork serve` | p50 / p99 ms |\n|---|---:|")
        for name, (p50, p99) in floors.items():
            print(f"| {name} | {p50:.2f} / {p99:.2f} |")
        print()
        print(
            "| inbox list (20 a page) | REST p50 / p99 ms | service p50 / p99 ms | plain SQL p50 / p99 ms |"
            " REST - SQL p50 |"
        )
        print("|---|---:|---:|---:|---:|")
        for name, row in results.items():
            rest, inproc, plain = row["REST"], row["service"], row["plain SQL"]
            print(
                f"| {name} | {rest[0]:.2f} / {rest[1]:.2f} | {inproc[0]:.2f} / {inproc[1]:.2f} |"
                f" {plain[0]:.2f} / {plain[1]:.2f} | {rest[0] - plain[0]:+.2f} ms |"
            )
    finally:
        worker.terminate()
        worker.wait(30)
        log.close()
        mail.stop()
        await db.disconnect()


def main() -> None:
    """Start the embedded stack in a temporary directory, run the bench, stop everything."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer latency samples")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gw-notifications-bench-") as tmp:
        data_dir = Path(tmp)
        postgres = start_postgres(data_dir)
        temporal = TemporalDevServer(data_dir, port=free_port(), ui_port=free_port())
        temporal.start()
        try:
            temporal.wait_ready(60)
            asyncio.run(bench(postgres.dsn, temporal.address, data_dir, args.quick))
        finally:
            temporal.stop()
            postgres.stop()


if __name__ == "__main__":
    main()
