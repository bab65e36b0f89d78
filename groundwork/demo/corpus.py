"""The demo corpus: project documents (specs, meeting notes, runbooks, PDFs) under `corpus/<PROJECT_KEY>/`.

`seed_demo_corpus()` ingests them into the demo workspace's projects. It writes PostgreSQL only
(sources, versions, passages and the index change log) and needs neither Temporal nor the index
writer: the worker's index follower indexes the passages within seconds of starting (or at once
if it already runs). Identical documents are a no-op, so seeding twice changes nothing.
"""

from __future__ import annotations

from pathlib import Path

from groundwork.demo.records import WORKSPACE_SLUG
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.evidence_search.admin import IngestReport, collect_files, ingest_files

CORPUS_DIR = Path(__file__).parent / "corpus"
DEMO_OWNER = "demo"


async def seed_demo_corpus() -> IngestReport:
    """Ingest every demo document into its project of the demo workspace (a no-op for unchanged ones)."""
    report = IngestReport()
    for project_dir in sorted(p for p in CORPUS_DIR.iterdir() if p.is_dir()):
        project = await tenancy.project_by_key(WORKSPACE_SLUG, project_dir.name)
        if project is None:
            continue
        project_report = await ingest_files(
            project,
            collect_files([project_dir]),
            owner=DEMO_OWNER,
            client=None,
            task_queue="",
            index=False,
        )
        report.files.extend(project_report.files)
    return report
