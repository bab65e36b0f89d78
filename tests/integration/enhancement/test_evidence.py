"""Drafts are grounded in the project's corpus, and only in what the requester may read."""

from __future__ import annotations

from typing import Any

import httpx

from groundwork.persistence import change_feed, db
from groundwork.services.enhancement.evidence import CorpusEvidence
from tests.conftest import Workspace
from tests.integration.context_engine.helpers import body, register
from tests.integration.context_engine.helpers import contribute as contribute_package
from tests.integration.enhancement.conftest import create_run
from tests.integration.evidence_search.helpers import contribute

RUNBOOK = """# Card vault runbook

## Tokens

PSP tokens must be rotated whenever the PSP signals a card update. Card numbers must never appear in
application logs; the log scrubber rejects any 13-19 digit sequence.

## Migration

The legacy vault export runs nightly; the migration to PSP tokens must finish before the vault licence ends.
"""


async def test_drafts_cite_corpus_passages_of_the_project(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    await contribute(workspace, "ALPHA", "runbooks/card-vault.md", RUNBOOK)
    run = (await create_run(client, workspace, key, work_item["id"], ["requirements", "risk_check"])).json()["data"]
    requirements = next(d for d in run["drafts"] if d["field"] == "requirements")
    passages = [r for r in requirements["evidenceRefs"] if r["kind"] == "passage"]
    assert passages and all(r["id"].startswith("psg_") for r in passages)
    for ref in requirements["evidenceRefs"]:  # every reference names the route that opens it
        opened = await client.get(ref["href"], headers=workspace.headers(key))
        assert opened.status_code == 200 and opened.json()["data"]["id"] == ref["id"], opened.text
    assert "Card numbers must never appear in application logs" in requirements["proposedValue"]
    digest = next(a for a in run["artifacts"] if a["type"] == "evidence_digest" and "requirements" in a["title"])
    assert "corpus source" in digest["summary"] and "Card vault runbook" in digest["body"]
    only_item = (await create_run(client, workspace, key, work_item["id"], ["requirements"])).json()["data"]
    assert only_item["drafts"][0]["confidence"] == requirements["confidence"]  # same input, same output


async def test_a_requester_without_context_read_gets_no_corpus_evidence(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    await contribute(workspace, "ALPHA", "runbooks/card-vault.md", RUNBOOK)
    guest = await workspace.key("guest", memberships={"ALPHA": "guest"})
    # Requirements draw on the corpus alone; acceptance criteria may draw on the item's own requirements.
    actions = ["requirements", "acceptance_criteria"]
    run = (await create_run(client, workspace, guest, work_item["id"], actions)).json()["data"]
    assert run["state"] == "ready_for_review" and [d["field"] for d in run["drafts"]] == ["acceptance_criteria"]
    refs = {r["kind"] for d in run["drafts"] for r in d["evidenceRefs"]}
    assert refs == {"work_item"}
    assert "application logs" not in run["drafts"][0]["proposedValue"]


async def test_the_requesters_context_read_is_checked_afresh_after_a_role_change(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    await contribute(workspace, "ALPHA", "runbooks/card-vault.md", RUNBOOK)
    ana = await workspace.key("ana", memberships={"ALPHA": "contributor"})

    def corpus_refs(run: dict[str, Any]) -> set[str]:
        return {r["kind"] for d in run["drafts"] for r in d["evidenceRefs"]} - {"work_item"}

    first = (await create_run(client, workspace, ana, work_item["id"], ["requirements"])).json()["data"]
    assert corpus_refs(first) == {"passage"}
    # The worker keeps whether a requester may read the project's context: a change of role drops it.
    await db.execute("UPDATE memberships SET role = 'guest' WHERE principal_id = $1", workspace.principals["ana"])
    await change_feed.caught_up()
    second = (await create_run(client, workspace, ana, work_item["id"], ["acceptance_criteria"])).json()["data"]
    assert second["state"] == "ready_for_review" and corpus_refs(second) == set()
    assert "application logs" not in second["drafts"][0]["proposedValue"]


async def test_drafts_cite_matching_ready_context_packages_of_the_project(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    radar = await register(workspace, "risk-radar", capabilities=["risks"])
    ledger = await register(workspace, "ledger", "financial", ["risks"])
    alpha = workspace.projects["ALPHA"]
    package = await contribute_package(
        workspace,
        body(
            radar,
            alpha,
            "Card token migration",
            "The card token migration to PSP tokens must finish before the legacy vault licence ends.",
        ),
    )
    secret = await contribute_package(
        workspace,
        body(ledger, alpha, "Card token budget", "The card token migration must save cards within the PSP budget."),
    )
    other = await contribute_package(
        workspace,
        body(radar, workspace.projects["BETA"], "Card tokens in beta", "Card tokens must be saved in beta too."),
    )
    run = (await create_run(client, workspace, key, work_item["id"], ["requirements"])).json()["data"]
    refs = [r for d in run["drafts"] for r in d["evidenceRefs"]]
    cited = {r["id"] for r in refs if r["kind"] == "context_package"}
    assert cited == {package["entryId"]}
    [href] = {r["href"] for r in refs if r["kind"] == "context_package"}
    opened = await client.get(href, headers=workspace.headers(key))
    assert opened.status_code == 200 and opened.json()["data"]["id"] == package["entryId"]
    assert secret["entryId"] not in cited and other["entryId"] not in cited
    requirements = run["drafts"][0]
    traced = [
        s
        for s in requirements["statements"]
        if ("context_package", package["entryId"]) in {(r["kind"], r["id"]) for r in s["evidenceRefs"]}
    ]
    assert traced and all(s["text"] in requirements["proposedValue"] for s in traced)
    assert "[context_package:" not in requirements["proposedValue"]


MAIL_GUIDE = """# Postgrey notes

## Postgrey

Greylisting fights spam: an unknown sender's first delivery attempt is refused and its retry accepted.

The postgrey daemon keeps the triplets it has seen in a small database under /var/lib/postgrey.

Its whitelist lists the senders that never wait, one domain a line.

Postfix consults it through the check_policy_service inet:127.0.0.1:10023 restriction in /etc/postfix/main.cf.

## Quotas

Each mailbox holds at most two gigabytes; the daemon bounces what exceeds it.
"""


async def _always(*_who: Any) -> bool:
    return True


async def test_a_run_gathers_the_passages_around_the_best_one_in_its_section_in_document_order(
    workspace: Workspace, worker: Any
) -> None:
    await contribute(workspace, "ALPHA", "guides/mail.md", MAIL_GUIDE)
    gathered = await CorpusEvidence(holds=_always).gather(
        workspace.id,
        workspace.projects["ALPHA"],
        "prn_any",
        "Greylisting on the mail server",
        {"description": "Too much spam. Try greylisting."},
    )
    texts = [e.text for e in gathered]
    # The setting that answers shares no word with the item: it comes with the passage that does, in order.
    first = next(i for i, t in enumerate(texts) if t.startswith("Greylisting fights spam"))
    setting = next(i for i, t in enumerate(texts) if "check_policy_service" in t)
    assert setting > first
    assert [t.split()[0] for t in texts[first : setting + 1]] == ["Greylisting", "The", "Its", "Postfix"]
    # Another section's passage sharing no word with the item is not gathered.
    assert not any("two gigabytes" in t for t in texts)
