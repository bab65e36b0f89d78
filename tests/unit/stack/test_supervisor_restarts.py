"""The supervisor of `groundwork up` restarts a crashing child with backoff and gives up after repeated crashes."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from groundwork.stack import supervisor


def _crashing_child(tmp_path: Path, script: str) -> supervisor._Child:
    return supervisor._spawn("Worker", [sys.executable, "-c", script], {}, tmp_path / "worker.log")


def test_a_child_crashing_again_and_again_is_restarted_with_backoff_then_given_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(supervisor, "RESTART_BACKOFF", 0.05)
    monkeypatch.setattr(supervisor, "RESTART_BACKOFF_MAX", 0.2)
    child = _crashing_child(tmp_path, "import sys; print('boom', flush=True); sys.exit(3)")
    started = time.monotonic()
    code = supervisor._supervise(supervisor._Supervised([], [child]), supervisor._StopRequest())
    child.stop()
    out = capsys.readouterr().out
    assert code == 1
    assert out.count("restarted (pid") == supervisor.RESTART_LIMIT - 1, out
    assert out.count("exited unexpectedly (exit 3)") == supervisor.RESTART_LIMIT, out
    assert f"crashed {supervisor.RESTART_LIMIT} times within" in out and "giving up" in out, out
    # Backoff doubles: 0.05 + 0.1 + 0.2 + 0.2 s at least between the five crashes.
    assert time.monotonic() - started >= 0.55
    assert "restarting in" in out


def test_a_child_that_crashes_once_is_restarted_and_the_stack_keeps_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(supervisor, "RESTART_BACKOFF", 0.05)
    marker = tmp_path / "crashed-once"
    child = _crashing_child(
        tmp_path,
        f"import pathlib, sys, time\nm = pathlib.Path({str(marker)!r})\n"
        "if not m.exists():\n    m.touch()\n    sys.exit(9)\ntime.sleep(60)",
    )
    stop = supervisor._StopRequest()
    first_pid = child.process.pid

    def stop_once_restarted() -> str | None:
        if child.process.pid != first_pid and child.process.poll() is None:
            stop.signum = 2
        return None

    deadline = time.monotonic() + 30
    supervised = supervisor._Supervised([lambda: None if time.monotonic() < deadline else "timed out"], [child])
    supervised.fatal.append(stop_once_restarted)
    code = supervisor._supervise(supervised, stop)
    out = capsys.readouterr().out
    assert code == 0, out
    assert child.process.poll() is None  # the restarted child runs on
    assert "Worker       crashed; restarting in 0 s (crash 1 of" in out, out
    assert out.count("restarted (pid") == 1, out
    assert child.stop() in ("stopped", "stopped (SIGTERM)")
