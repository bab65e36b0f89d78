"""`groundwork import`: work items from Groundwork's JSON Lines, or from a GitHub Issues or Jira export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from groundwork.cli.runner import data_dir_option, run_with_db, say


def _json_map(path: Path | None, option: str) -> dict[str, str] | None:
    if path is None:
        return None
    try:
        mapping = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise click.UsageError(f"{option}: cannot read {path}: {exc}") from None
    if not isinstance(mapping, dict) or not all(isinstance(v, str) for v in mapping.values()):
        raise click.UsageError(f'{option}: give a JSON object of strings, e.g. {{"octocat": "ana"}}')
    return {str(k): v for k, v in mapping.items()}


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "kind",
    type=click.Choice(["jsonl", "github", "jira"]),
    default="jsonl",
    show_default=True,
    help="jsonl: Groundwork's own lines; github: the issues JSON array GitHub's API (or `gh issue list --json`) "
    "returns; jira: Jira's Export CSV (all fields).",
)
@click.option("--workspace", "workspace_slug", required=True, help="Workspace slug.")
@click.option("--project", "project_key", default=None, help="Project key (required for github and jira).")
@click.option(
    "--principal",
    "principal_name",
    default=None,
    help="The principal the change history names.  [default: admin for jsonl, else the workspace's first admin]",
)
@click.option(
    "--status-map",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help='JSON object: tracker status → canonical status, over the default map (e.g. {"Blocked": "in_progress"}).',
)
@click.option(
    "--people-map",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="JSON object: login or e-mail → principal name; anyone else is matched by name or created (no key).",
)
@data_dir_option
def import_(
    file: Path,
    kind: str,
    workspace_slug: str,
    project_key: str | None,
    principal_name: str | None,
    status_map: Path | None,
    people_map: Path | None,
    data_dir: Path | None,
) -> None:
    """Load work items; bad lines or entries are reported by number and skipped (exit 1)."""
    if kind == "jsonl":
        _import_lines(file, workspace_slug, principal_name or "admin", data_dir)
        return
    if project_key is None:
        raise click.UsageError(f"--format {kind} needs --project KEY")
    from groundwork.services.work_items.tracker_import import import_file_into

    text = file.read_text(encoding="utf-8-sig")
    statuses, people = _json_map(status_map, "--status-map"), _json_map(people_map, "--people-map")
    report = run_with_db(
        data_dir,
        lambda: import_file_into(
            workspace_slug,
            project_key,
            kind,
            text,
            principal_name=principal_name,
            status_map=statuses,
            people_map=people,
        ),
    )
    where = "entry" if kind == "github" else "row"
    for number, reason in report.rejected:
        say(f"{where} {number}: skipped: {reason}")
    for warning in report.warnings:
        say(f"warning: {warning}")
    if report.created_principals:
        say(f"created principals (no keys): {', '.join(report.created_principals)}")
    say(
        f"created {len(report.created)}, updated {len(report.updated)}, unchanged {len(report.unchanged)}, "
        f"skipped {len(report.rejected)} bad {where}(s) and {report.pull_requests_skipped} pull request(s)"
    )
    if report.rejected:
        raise SystemExit(1)


def _import_lines(file: Path, workspace_slug: str, principal_name: str, data_dir: Path | None) -> None:
    from groundwork.services.work_items.importer import import_work_items

    def work() -> Any:
        with file.open(encoding="utf-8") as lines:
            return import_work_items(workspace_slug, principal_name, lines.readlines())

    report = run_with_db(data_dir, work)
    for number, reason in report.rejected:
        say(f"line {number}: skipped: {reason}")
    say(f"imported {len(report.created)} work item(s), skipped {len(report.rejected)} line(s)")
    if report.rejected:
        raise SystemExit(1)
