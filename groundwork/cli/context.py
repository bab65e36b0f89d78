"""The context engine: `contribute` and `providers`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from groundwork.cli.runner import corpus_index_dir, data_dir_option, run_with_db, run_with_dsn, say, worker_client
from groundwork.config import Settings
from groundwork.domain.errors import GroundworkError

if TYPE_CHECKING:
    from groundwork.persistence.repositories.context_engine.providers import ProviderRow


@click.command()
@click.argument("file", type=click.File("r", encoding="utf-8"))
@click.option("--workspace", "workspace_slug", required=True, help="Workspace slug (every line's provider is in it).")
@click.option("--local", is_flag=True, help="Run the contribution steps in this process even if a worker is running.")
@data_dir_option
def contribute(file: Any, workspace_slug: str, local: bool, data_dir: Path | None) -> None:
    """Contribute to the context engine from a JSON Lines file, one contribution a line.

    Each line is `{provider_id, project_id, term, summary, contribution_type, evidence: [{capability,
    reference: {kind, id, class}, as_of}], generated_at, promoter_identity?, supersedes?}`. Bad lines
    are reported with their number and contribute nothing; each good line runs a
    ContextContributionWorkflow (through the worker when one polls, else its steps here in one
    transaction). A line contributed before changes nothing. Exit code 1 if any line failed.
    """
    from groundwork.services.context_engine.contribution_file import contribute_lines

    lines = file.readlines()

    async def work(dsn: str) -> Any:
        settings = Settings.from_env(database_url=dsn)
        from groundwork.search import corpus_index

        corpus_index.configure(corpus_index_dir(data_dir))
        client = None if local else await worker_client(settings)
        say("contributing " + ("through the worker (Temporal)" if client is not None else "in this process"))
        count = sum(1 for line in lines if line.strip())
        with click.progressbar(length=count, label="Contributing", file=sys.stderr) as bar:
            return await contribute_lines(
                workspace_slug,
                lines,
                client=client,
                task_queue=settings.temporal_task_queue,
                progress=lambda _: bar.update(1),
            )

    report = run_with_dsn(data_dir, work)
    for line in report.failed:
        say(f"line {line.number}: {line.reason}")
    counts = report.counts()
    done = sum(n for outcome, n in counts.items() if outcome not in ("failed", "unchanged"))
    click.echo(
        f"contributed {done} line(s): {counts['created']} created, {counts['merged']} merged, "
        f"{counts['superseded']} superseded, {counts['kept_separate']} kept separate; "
        f"unchanged {counts['unchanged']}; failed {counts['failed']}"
    )
    if counts["failed"]:
        raise SystemExit(1)


@click.group()
def providers() -> None:
    """Context providers: list, register, and run the built-in ones."""


@providers.command("run")
@click.option("--workspace", "workspace_slug", default=None, help="Only this workspace (default: every workspace).")
@click.option("--local", is_flag=True, help="Run in this process even if a worker is running.")
@data_dir_option
def providers_run(workspace_slug: str | None, local: bool, data_dir: Path | None) -> None:
    """Run the built-in providers (work-items, corpus) now; only what changed is contributed."""
    from groundwork.services.context_engine.providers import run_builtin_providers

    async def work(dsn: str) -> Any:
        settings = Settings.from_env(database_url=dsn)
        from groundwork.search import corpus_index

        corpus_index.configure(corpus_index_dir(data_dir))
        client = None if local else await worker_client(settings)
        say("running the built-in providers " + ("through the worker" if client is not None else "in this process"))
        return await run_builtin_providers(workspace_slug, client=client, task_queue=settings.temporal_task_queue)

    result = run_with_dsn(data_dir, work)
    click.echo(f"contributed {result.contributed}, unchanged {result.unchanged}")


@providers.command("list")
@click.option("--workspace", "workspace_slug", required=True, help="Workspace slug.")
@data_dir_option
def providers_list(workspace_slug: str, data_dir: Path | None) -> None:
    """List the workspace's providers: id, name, classification, authority, capabilities."""
    from groundwork.persistence.repositories.context_engine import providers as provider_rows
    from groundwork.persistence.repositories.tenancy import workspaces as tenancy

    async def work() -> list[ProviderRow]:
        workspace = await tenancy.get_workspace_by_slug(workspace_slug)
        if workspace is None:
            raise GroundworkError(f"No workspace with the slug {workspace_slug!r}.")
        return await provider_rows.providers_of_workspace(workspace.id)

    rows = run_with_db(data_dir, work)
    for row in rows:
        kind = "built-in" if row.builtin else "registered"
        click.echo(f"{row.id}  {row.name}  {row.classification}  {row.authority}  {kind}  {' '.join(row.capabilities)}")
    if not rows:
        say("no providers (the built-in ones are registered by their first run)")


@providers.command("register")
@click.option("--workspace", "workspace_slug", required=True, help="Workspace slug.")
@click.option("--name", required=True, help="Provider name (lowercase letters, digits, dashes).")
@click.option(
    "--classification",
    required=True,
    type=click.Choice(["delivery", "corpus", "work_items", "financial", "staffing"]),
)
@click.option("--capability", "capabilities", multiple=True, required=True, help="A capability; repeat for more.")
@click.option("--authority", default="advisory", type=click.Choice(["advisory", "canonical"]), show_default=True)
@data_dir_option
def providers_register(
    workspace_slug: str,
    name: str,
    classification: str,
    capabilities: tuple[str, ...],
    authority: str,
    data_dir: Path | None,
) -> None:
    """Register a provider (as the internal API does); prints its id alone on stdout."""
    from groundwork.domain.tenancy.principals import Principal
    from groundwork.persistence.repositories.tenancy import workspaces as tenancy
    from groundwork.services.context_engine.contributions import ProviderRegistration, register_provider

    async def work() -> tuple[ProviderRow, bool]:
        workspace = await tenancy.get_workspace_by_slug(workspace_slug)
        if workspace is None:
            raise GroundworkError(f"No workspace with the slug {workspace_slug!r}.")
        operator = Principal("", workspace.id, "cli", "provider", False, "", frozenset())
        return await register_provider(
            operator, ProviderRegistration(name, classification, list(capabilities), authority)
        )

    row, created = run_with_db(data_dir, work)
    say(("registered" if created else "updated") + f" provider {row.name}")
    click.echo(row.id)
