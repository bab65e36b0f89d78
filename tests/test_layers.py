"""The layer rules of the design ("Layout") hold: every import-linter contract in pyproject.toml is kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_every_import_contract_is_kept() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint_imports)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_every_service_module_has_a_test_module_named_after_it() -> None:
    services = REPO / "groundwork" / "services"
    untested = set()
    for module in services.glob("*/*.py"):
        if module.name == "__init__.py":
            continue
        domain, name = module.parent.name, module.stem
        candidates = [
            REPO / "tests" / "integration" / domain / f"test_{name}.py",
            REPO / "tests" / "unit" / "services" / domain / f"test_{name}.py",
        ]
        if not any(path.exists() for path in candidates):
            untested.add(f"{domain}/{name}")
    assert not untested, f"service modules without a test module named after them: {sorted(untested)}"
