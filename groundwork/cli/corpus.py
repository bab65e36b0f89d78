"""The evidence search corpus: `ingest`, `reindex` and `resegment`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from groundwork.cli.runner import corpus_index_dir, data_dir_option, run_with_dsn, say, worker_client
from groundwork.config import Settings


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--project", "project_ref", required=True, help="Project id (`prj_...`), or its key with --workspace.")
@click.option("--workspace", "workspace_slug", default=None, help="Workspace slug, to find --project by key.")
@click.option(
    "--uri",
    default=None,
    help="The source's uri (one file only). Default: the path relative to the folder given, or the file name.",
)
@click.option("--owner", default="cli", show_default=True, help="Who owns the sources.")
@click.option(
    "--classification",
    type=click.Choice(["general", "financial", "staffing"]),
    default=None,
    help="Classify the sources: financial and staffing ones (and their passages) exist only for keys with "
    "context-engine:financial / :staffing. Default: general for new sources, unchanged for known ones.",
)
@click.option("--local", is_flag=True, help="Run the ingest steps in this process even if a worker is running.")
@data_dir_option
def ingest(
    paths: tuple[Path, ...],
    project_ref: str,
    workspace_slug: str | None,
    uri: str | None,
    owner: str,
    classification: str | None,
    local: bool,
    data_dir: Path | None,
) -> None:
    """Ingest files and folders (.txt, .md, .html, .pdf) into a project's evidence corpus.

    A source is identified by its uri: changed content makes a new version that replaces the old
    passages, identical content changes nothing. With a worker running, each source is ingested by
    a CorpusIngestWorkflow; otherwise the same steps run here.
    """
    from groundwork.search import corpus_index
    from groundwork.services.evidence_search import admin as corpus_admin

    try:
        files = corpus_admin.collect_files(list(paths), uri)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if not files:
        say("no files to ingest")
        return

    async def work(dsn: str) -> corpus_admin.IngestReport:
        settings = Settings.from_env(database_url=dsn)
        corpus_index.configure(corpus_index_dir(data_dir))
        project = await corpus_admin.resolve_project(project_ref, workspace_slug)
        client = None if local else await worker_client(settings)
        say(
            f"ingesting into {project.key} "
            + ("through the worker (Temporal)" if client is not None else "in this process")
        )
        with click.progressbar(length=len(files), label="Ingesting", file=sys.stderr) as bar:
            return await corpus_admin.ingest_files(
                project,
                files,
                owner=owner,
                classification=classification,
                client=client,
                task_queue=settings.temporal_task_queue,
                progress=lambda _: bar.update(1),
            )

    report = run_with_dsn(data_dir, work)
    click.echo(f"added      {report.count('added')} source(s), {report.passages_added} passage(s)")
    click.echo(f"unchanged  {report.count('unchanged')} source(s)")
    if report.count("reclassified"):
        click.echo(f"reclassified {report.count('reclassified')} source(s) (same content, new classification)")
    if report.count("skipped"):
        click.echo(f"skipped    {report.count('skipped')} file(s) of a type Groundwork does not read")
    click.echo(f"failed     {report.count('failed')} source(s)")
    for outcome in report.files:
        if outcome.outcome == "failed":
            click.echo(f"  {outcome.uri}: {outcome.reason}")
    if report.count("failed"):
        raise SystemExit(1)


@click.command()
@data_dir_option
def reindex(data_dir: Path | None) -> None:
    """Rebuild the evidence search index from PostgreSQL; the API serves the old index until the switch."""
    from groundwork.persistence.repositories.evidence_search import index_log
    from groundwork.search.corpus_index import CorpusIndex
    from groundwork.services.evidence_search import admin as corpus_admin

    async def work(dsn: str) -> tuple[int, bool, int]:
        from groundwork.persistence.repositories.context_engine import entry_index_log
        from groundwork.platform.search_replica.package_projection import rebuild_package_index
        from groundwork.search.package_index import PackageIndex

        index = CorpusIndex.at(corpus_index_dir(data_dir))
        total = await index_log.count_indexable_passages()
        with click.progressbar(length=total, label="Reindexing", file=sys.stderr) as bar:
            written, caught_up = await corpus_admin.reindex(index, bar.update)
        packages = PackageIndex.at(corpus_index_dir(data_dir))
        with click.progressbar(
            length=await entry_index_log.count_ready_entries(), label="Packages", file=sys.stderr
        ) as bar:
            package_count = await rebuild_package_index(packages, bar.update)
        packages.release_writer()
        return written, caught_up, package_count

    written, caught_up, package_count = run_with_dsn(data_dir, work)
    click.echo(f"indexed {written} passage(s) into a new index generation")
    click.echo(f"indexed {package_count} context package(s) into a new index generation")
    if not caught_up:
        say("a running worker holds the index: it applies changes made during the rebuild itself")


@click.command()
@click.argument("segmenter")
@click.option(
    "--stage-only", is_flag=True, help="Cut and index the new passages, but keep the current version serving."
)
@click.option("--local", is_flag=True, help="Run the steps in this process even if a worker is running.")
@data_dir_option
def resegment(segmenter: str, stage_only: bool, local: bool, data_dir: Path | None) -> None:
    """Re-segment the corpus with a segmenter version (e.g. `paragraph@2`) and switch search to it."""
    from temporalio.client import WorkflowFailureError
    from temporalio.exceptions import ApplicationError

    from groundwork.search import corpus_index
    from groundwork.services.evidence_search import admin as corpus_admin

    async def work(dsn: str) -> Any:
        settings = Settings.from_env(database_url=dsn)
        corpus_index.configure(corpus_index_dir(data_dir))
        client = None if local else await worker_client(settings)
        say(f"re-segmenting with {segmenter} " + ("through the worker" if client else "in this process"))
        try:
            return await corpus_admin.resegment(
                segmenter, activate=not stage_only, client=client, task_queue=settings.temporal_task_queue
            )
        except (ApplicationError, WorkflowFailureError) as exc:
            cause = getattr(exc, "cause", None) or exc
            say(f"error: {getattr(cause, 'message', None) or cause}")
            raise SystemExit(2) from None

    result = run_with_dsn(data_dir, work)
    click.echo(f"{result.segmenter_id}: {result.status} ({result.versions_cut} source version(s) cut)")
