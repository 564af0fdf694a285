"""The README's Python examples run as written (with stand-ins for the user's training code)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_python_examples() -> None:
    assert len(BLOCKS) >= 3


def test_readme_examples_run_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The blocks form one session (later blocks use names from earlier ones)."""
    monkeypatch.chdir(tmp_path)
    steps: dict[int, int] = {}

    def train_one_step(model: object) -> float:
        key = id(model)
        steps[key] = steps.get(key, 0) + 1
        return min(1.0, 0.3 + 0.001 * steps[key])

    namespace = {
        "train_one_step": train_one_step,
        "models": [object(), object(), object()],
        "val_accuracy": lambda model: min(1.0, 0.5 + 0.0005 * steps.get(id(model), 0)),
    }
    for index, block in enumerate(BLOCKS):
        exec(compile(block, f"README block {index}", "exec"), namespace)
    assert namespace["result"].regret.shape == (20,)  # type: ignore[attr-defined]
    assert (tmp_path / "tuning.json").is_file()
