"""Without its tool, an integration says in one line which extra to install."""

from __future__ import annotations

import importlib
import sys

import pytest

from risingbandits.extras import MissingExtra, require


@pytest.mark.parametrize(("tool", "module"), [("optuna", "optuna"), ("ray", "ray_tune")])
def test_a_missing_tool_names_its_extra(
    monkeypatch: pytest.MonkeyPatch, tool: str, module: str
) -> None:
    monkeypatch.setitem(sys.modules, tool, None)  # as if it were not installed
    monkeypatch.delitem(sys.modules, f"risingbandits.integrations.{module}", raising=False)
    with pytest.raises(MissingExtra, match=rf'pip install "risingbandits\[{tool}\]"') as caught:
        integration = importlib.import_module(f"risingbandits.integrations.{module}")
        integration.OptunaSelection(object(), [{"a": 1}, {"a": 2}], budget=10)
    assert "\n" not in str(caught.value)


def test_a_broken_tool_is_not_reported_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(name: str) -> None:
        raise ModuleNotFoundError("No module named 'its_dependency'", name="its_dependency")

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError, match="its_dependency"):
        require("optuna", "optuna", "the Optuna integration")
