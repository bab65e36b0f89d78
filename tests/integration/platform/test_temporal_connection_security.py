"""The TLS setting reaches the real connection: a TLS client cannot talk to the plaintext dev server."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from groundwork.config import Settings
from groundwork.platform.temporal.client import connect_client


async def test_tls_on_is_used_by_the_connection_and_plaintext_still_connects(settings: Settings) -> None:
    plain = await connect_client(settings)
    assert await plain.service_client.check_health()
    # rustls rejects the server's plaintext answer as a TLS record (`InvalidContentType`).
    with pytest.raises(RuntimeError, match="Failed client connect"):
        await asyncio.wait_for(connect_client(dataclasses.replace(settings, temporal_tls=True)), 60)
