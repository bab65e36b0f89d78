"""The `groundwork` command: the embedded stack, the production processes, keys, import and demo.

Each command group lives in its own module; this one gathers them under one `click` group.
"""

from __future__ import annotations

import logging
import sys

import click

from groundwork.cli import admin, apps, context, corpus, import_, keys, secrets, stack, webhooks, workspaces


@click.group()
def cli() -> None:
    """Groundwork: proposal-first work item enhancement, evidence search and notifications."""


for command in (
    stack.up,
    stack.serve,
    stack.worker,
    stack.status,
    stack.mcp,
    workspaces.workspaces,
    keys.keys,
    apps.apps,
    secrets.secrets,
    corpus.ingest,
    corpus.reindex,
    corpus.resegment,
    context.contribute,
    context.providers,
    webhooks.webhooks,
    import_.import_,
    admin.migrate,
    admin.demo,
):
    cli.add_command(command)


def main() -> None:
    """Console-script entry point."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    cli()
