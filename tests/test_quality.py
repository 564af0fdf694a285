"""Lint, format and type checks run as part of the test suite (ruff over the repository; mypy over
src/, docs/hooks and tuning/, as pyproject.toml lists)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _tool(name: str) -> list[str]:
    exe = Path(sys.executable).parent / name
    if exe.exists():
        return [str(exe)]
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[dev]'")
    return [found]


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)


def test_ruff_lint() -> None:
    res = _run([*_tool("ruff"), "check", "."])
    assert res.returncode == 0, res.stdout + res.stderr


def test_ruff_format() -> None:
    res = _run([*_tool("ruff"), "format", "--check", "."])
    assert res.returncode == 0, res.stdout + res.stderr


def test_mypy_src() -> None:
    res = _run([*_tool("mypy")])
    assert res.returncode == 0, res.stdout + res.stderr
