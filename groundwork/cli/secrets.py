"""`groundwork secrets`: secrets at rest under the key ring."""

from __future__ import annotations

from pathlib import Path

import click

from groundwork.cli.runner import data_dir_option, run_with_db, say, secret_keyring


@click.group()
def secrets() -> None:
    """Secrets at rest (webhook signing secrets, chat webhook URLs) under GROUNDWORK_SECRET_KEY."""


@secrets.command("reseal")
@data_dir_option
def secrets_reseal(data_dir: Path | None) -> None:
    """Re-encrypt every sealed secret under the first key of the ring (after putting a new key first)."""
    from groundwork.platform.secrets.at_rest import reseal_answers
    from groundwork.services.notifications.preferences import reseal_chat_urls
    from groundwork.services.webhooks.secrets import reseal_webhook_secrets

    keyring = secret_keyring(data_dir)
    if keyring is None:
        raise click.UsageError("GROUNDWORK_SECRET_KEY is not set (and the data dir has no secret_key file)")

    async def reseal() -> list[tuple[int, int]]:
        return [await step(keyring) for step in (reseal_webhook_secrets, reseal_answers, reseal_chat_urls)]

    (endpoints, bad_endpoints), (answers, bad_answers), (urls, bad_urls) = run_with_db(data_dir, reseal)
    say(
        f"resealed under the current key: {endpoints} webhook endpoint(s), "
        f"{answers} stored answer(s), {urls} chat webhook URL(s)"
    )
    unreadable = bad_endpoints + bad_answers + bad_urls
    if unreadable:
        say(f"error: {unreadable} sealed value(s) open under no key of the ring; see the log")
        raise SystemExit(1)
