"""services/enhancement/run_evidence: a run's evidence is gathered once, stored, and every action — in any process —
reads that stored copy."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from groundwork.domain.enhancement.enhancer import CorpusRarity, Evidence
from groundwork.domain.enhancement.model import EvidenceRef
from groundwork.persistence import db
from groundwork.persistence.repositories.enhancement import runs
from groundwork.services.enhancement.run_evidence import RunEvidence
from groundwork.services.tenancy.api_keys import resolve_key
from groundwork.services.work_items import items
from tests.conftest import Workspace


class CountingSource:
    """An evidence source that answers one passage a call, numbered, and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def gather(self, *_who: Any, **_steer: Any) -> list[Evidence]:
        self.calls += 1
        await asyncio.sleep(0.05)  # long enough for concurrent gatherers to overlap
        return [Evidence(EvidenceRef("passage", f"psg_{self.calls}"), f"gathered by call {self.calls}", "doc.md")]

    async def rarity(self, *_where: Any, **_steer: Any) -> CorpusRarity:
        return CorpusRarity(100 + self.calls, (("gather", self.calls),))


async def _run(workspace: Workspace) -> tuple[runs.RunRow, Any]:
    owner = await resolve_key(await workspace.key("owner", admin=True))
    assert owner is not None
    item = await items.create_work_item(owner, items.NewWorkItem(workspace.projects["ALPHA"], "Target"), source="rest")
    run_id = f"run_{uuid.uuid4().hex}"
    async with db.transaction():
        await runs.insert_run(
            run_id=run_id,
            workspace_id=workspace.id,
            project_id=workspace.projects["ALPHA"],
            target_id=item.id,
            actions=["description", "risk_check"],
            instructions="",
            requested_by=owner.id,
            code_context=False,
            generator="extractive",
        )
    run = await runs.get_run(workspace.id, run_id)
    assert run is not None
    return run, item


async def test_actions_in_two_processes_share_the_first_gathering(workspace: Workspace) -> None:
    run, item = await _run(workspace)
    first_source, second_source = CountingSource(), CountingSource()
    first, second = RunEvidence(first_source), RunEvidence(second_source)
    one = await first.for_run(run, item)
    again = await first.for_run(run, item)
    elsewhere = await second.for_run(run, item)
    assert [e.ref.id for e in one.evidence] == ["psg_1"]
    assert again == one and elsewhere.evidence == one.evidence
    # The item's words' corpus frequencies are stored with the passages and read back with them.
    assert one.rarity == elsewhere.rarity == CorpusRarity(101, (("gather", 1),))
    assert (first_source.calls, second_source.calls) == (1, 0)


async def test_concurrent_first_steps_store_one_copy_that_both_answer(workspace: Workspace) -> None:
    run, item = await _run(workspace)
    source_a, source_b = CountingSource(), CountingSource()
    a, b = await asyncio.gather(RunEvidence(source_a).for_run(run, item), RunEvidence(source_b).for_run(run, item))
    assert a.evidence == b.evidence
    assert source_a.calls + source_b.calls >= 1
