"""Every shell example of the README and of the API reference runs against `groundwork up --demo` on a fresh machine.

The examples are taken from the documents themselves, so an edit that breaks one fails here. They run as
one script, in a fixed order: the README's blocks first (its first block is the prelude that defines `H`,
`idem`, `pick`, `gql`, `mcp` and `PAY`), then those of `docs/api/` in the order of `API_REFERENCE`, each
file's blocks top to bottom. A block may use what any block before it defined. "Fresh" means what a fresh
Debian has besides the set-up's Python: `curl`, but no `uuidgen` and no `jq` (both are shadowed by
functions that fail the run if an example calls them).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import free_port
from tests.e2e.test_up import START_TIMEOUT, UpProcess

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
API_DOCS = ROOT / "docs" / "api"
# The order the API reference's examples run in, after the README's; each file says so at its top.
API_REFERENCE = (
    "work-items-and-tenancy.md",
    "work-item-enhancement.md",
    "context-engine.md",
    "notifications-messaging.md",
    "webhooks.md",
    "mcp.md",
)
SHELL_BLOCK = re.compile(r"^( *)```sh\n(.*?)^\1```", re.S | re.M)
ACTION_LINK = re.compile(r"http://127\.0\.0\.1:(\d+)/api/v1/notification-actions/(\S+)")
VIEW_LINK = re.compile(r"http://127\.0\.0\.1:(\d+)/api/v1/notification-views/(\S+)")


def example_files() -> list[Path]:
    """README.md, then every file of docs/api/ in the documented order."""
    return [README, *(API_DOCS / name for name in API_REFERENCE)]


def shell_examples(path: Path) -> list[str]:
    """A document's shell blocks that use a running stack (not the set-up commands), dedented."""
    blocks = []
    for indent, body in SHELL_BLOCK.findall(path.read_text()):
        if "pip install" in body:
            continue
        blocks.append("\n".join(line[len(indent) :] for line in body.splitlines()))
    return blocks


def test_every_api_reference_file_has_its_place_in_the_order() -> None:
    assert sorted(path.name for path in API_DOCS.glob("*.md")) == sorted(API_REFERENCE)
    for path in example_files():
        assert shell_examples(path), f"{path.relative_to(ROOT)} has no shell example"


def script_for(blocks: list[str], port: int, internal_port: int, headers_dir: Path) -> str:
    """One bash script running every block in order against the stack's ports; every curl call
    leaves its response headers in `headers_dir`, so the test sees each status code."""
    prelude = f"""set -euo pipefail
jq() {{ echo "an example needs jq, which a fresh machine lacks" >&2; exit 97; }}
uuidgen() {{ echo "an example needs uuidgen, which a fresh machine lacks" >&2; exit 98; }}
curl() {{ command curl -D "$(mktemp -p "{headers_dir}")" "$@"; }}
"""
    body = "\n".join(blocks)
    body = body.replace("localhost:8000", f"localhost:{port}").replace("127.0.0.1:8000", f"127.0.0.1:{port}")
    body = body.replace("localhost:8001", f"localhost:{internal_port}")
    # The action link's token is printed by the SMTP sink; the test follows it itself.
    body = "\n".join(line for line in body.splitlines() if "<token>" not in line)
    return prelude + body + "\n"


def statuses(headers_dir: Path) -> list[int]:
    codes = []
    for path in headers_dir.iterdir():
        first = path.read_text().splitlines()[0]
        codes.append(int(first.split()[1]))
    return codes


def test_every_readme_example_runs_on_a_fresh_machine(tmp_path: Path) -> None:
    blocks = [block for path in example_files() for block in shell_examples(path)]
    assert len(blocks) >= 15, "the examples of the README and docs/api/ were not found"
    workdir = tmp_path / "work"
    workdir.mkdir()
    # As the README has it: the venv in the current directory, and the stack's data in ./.groundwork.
    (workdir / ".venv").symlink_to(sys.prefix)
    data_dir = workdir / ".groundwork"
    up = UpProcess(data_dir, ("--smtp-sink", "--smtp-port", str(free_port())))
    try:
        key = up.wait_for("Demo API key", START_TIMEOUT)
        up.wait_for("Press Ctrl-C to stop.", 30)
        headers_dir = tmp_path / "headers"
        headers_dir.mkdir()
        script = workdir / "readme.sh"
        script.write_text(script_for(blocks, up.port, up.internal_port, headers_dir))
        environment = {
            name: value
            for name, value in os.environ.items()
            if name not in ("GROUNDWORK_HOME", "DATABASE_URL", "VIRTUAL_ENV") and not name.startswith("TEMPORAL_")
        }
        result = subprocess.run(
            ["bash", str(script)],
            cwd=workdir,
            env={**environment, "KEY": key},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert result.returncode == 0, f"stdout:\n{result.stdout[-4000:]}\nstderr:\n{result.stderr[-4000:]}"
        codes = statuses(headers_dir)
        assert len(codes) >= 80, codes
        # Exactly one answer is meant to be a refusal: the apply preview (confirm omitted -> 422 with the diff).
        assert [code for code in codes if not 200 <= code < 300] == [422], codes
        # The e-mail example: the sink printed the view link, a page with no key, and the action link;
        # following that acknowledges once.
        view = VIEW_LINK.search(up.wait_for("View:", 60))
        link = ACTION_LINK.search(up.wait_for("Acknowledge:", 60))
        assert view is not None and link is not None
        with httpx.Client(timeout=30) as http:
            page = http.get(f"http://127.0.0.1:{up.port}/api/v1/notification-views/{view.group(2)}")
            assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
            assert "Yes, the last blocker closes tomorrow." in page.text
            url = f"http://127.0.0.1:{up.port}/api/v1/notification-actions/{link.group(2)}"
            assert http.post(url).status_code == 200
            assert http.post(url).status_code == 410
    finally:
        up.close()
