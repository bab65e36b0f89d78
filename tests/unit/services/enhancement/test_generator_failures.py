"""A run's error message is written for the person reading the run: never an exception's name or repr."""

from __future__ import annotations

import re
import socket

import pytest

from groundwork.domain.enhancement.enhancer import EnhancementContext
from groundwork.services.enhancement.chat_completions import ChatCompletionsEnhancer, GenerationFailed

PYTHON = re.compile(r"\w+(?:Error|Exception)\b|\{'|<class ")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_unreachable_generator_is_described_not_named() -> None:
    enhancer = ChatCompletionsEnhancer(f"http://127.0.0.1:{_closed_port()}/v1", "model", None, timeout=2)
    context = EnhancementContext("design", "wi_1", "ALPHA-1", "Save cards", {}, (), "", None)
    with pytest.raises(GenerationFailed) as failed:
        await enhancer.enhance(context)
    message = str(failed.value)
    assert "could not be reached" in message and "run the action again" in message
    assert not PYTHON.search(message), message
