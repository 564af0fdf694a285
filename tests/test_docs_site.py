"""The documentation site builds with warnings as errors, holds its key pages, and the Python
examples of its hand-written pages run as written (with stand-ins for the user's training)."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from risingbandits.policies import POLICIES

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
# page -> what its examples leave behind (name, value)
EXAMPLE_PAGES = {
    "index.md": lambda ns, cwd: ns["result"].regret.shape == (20,),
    "getting-started.md": lambda ns, cwd: ns["policy"].pulls.sum() == 1_000,
    "model-selection.md": lambda ns, cwd: (
        (cwd / "tuning.json").is_file()
        and ns["study"].user_attrs[ns["selection"].summary_key]["steps"] == 200
        and ns["again"].names == ("sgd", "mlp-small", "mlp-large")
    ),
}
INCLUDE = "--8<--"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner about MkDocs 2.0
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)]
    res = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    return out


def page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text(encoding="utf-8")


def test_key_pages_exist(site: Path) -> None:
    for name in ["getting-started", "model-selection", "policies", "reproduction/report"]:
        assert (site / name / "index.html").is_file(), name
    assert (site / "index.html").is_file()
    assert (site / "reproduction" / "figures" / "fig1-intro.png").is_file()
    assert "Claims vs our results" in page(site, "reproduction/report")


def test_policies_page_lists_every_registered_policy(site: Path) -> None:
    policies, classes = page(site, "policies"), page(site, "api/policy-classes")
    for name, cls in POLICIES.items():
        assert f'id="{name}"' in policies, name
        assert html.escape(cls.paper, quote=False) in policies, name
        assert f'id="{cls.__module__}.{cls.__qualname__}"' in classes, name


def test_api_reference_documents_the_public_objects(site: Path) -> None:
    selector = page(site, "api/modelselect")
    assert 'id="risingbandits.modelselect.selector.ModelSelector"' in selector
    assert 'id="risingbandits.modelselect.selector.ModelSelector.set_budget"' in selector
    integrations = page(site, "api/integrations")
    for name in ["optuna.OptunaSelection", "ray_tune.RisingBanditScheduler", "shell.run_commands"]:
        assert f'id="risingbandits.integrations.{name}"' in integrations, name
    top = page(site, "api")
    import risingbandits

    for name in set(risingbandits.__all__) - {"__version__"}:
        assert f"<code>{name}</code>" in top, name


def test_sphinx_roles_become_links_or_code(site: Path) -> None:
    """No docstring shows a raw ``:class:`...``` role; resolvable ones link to their object."""
    for path in (site / "api").rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r":(class|func|meth|mod|data|attr):`", text), path
    assert 'href="#risingbandits.modelselect.selector.MAX_REDIRECTS"' in page(
        site, "api/modelselect"
    )


def test_ray_example_is_included_from_the_example_file(site: Path) -> None:
    text = page(site, "model-selection")
    assert INCLUDE not in text
    assert "RisingBanditScheduler" in text and "get_checkpoint" in text


def python_blocks(name: str) -> list[str]:
    text = (DOCS / name).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return [block for block in blocks if not block.startswith(INCLUDE)]


def stand_ins() -> dict[str, object]:
    """The names the examples leave to the user: models and one step of their training."""
    steps: dict[object, int] = {}

    def train_one_step(model: object) -> float:
        steps[model] = steps.get(model, 0) + 1
        return min(1.0, 0.3 + 0.001 * steps[model])

    return {
        "train_one_step": train_one_step,
        "models": ["sgd", "mlp-small", "mlp-large"],
        "val_accuracy": lambda model: min(1.0, 0.5 + 0.0005 * steps.get(model, 0)),
    }


@pytest.mark.parametrize("name", EXAMPLE_PAGES)
def test_page_examples_run_in_order(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each page's Python blocks form one session (later blocks use earlier names)."""
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks(name)
    assert blocks, name
    namespace = stand_ins()
    for index, block in enumerate(blocks):
        exec(compile(block, f"{name} block {index}", "exec"), namespace)
    assert EXAMPLE_PAGES[name](namespace, tmp_path), name
