"""Shared fixtures: small random rising instances, the shared IMDB data location, the
repository's scripts as modules, a local Ray instance, and Ray Tune's logged messages."""

from __future__ import annotations

import importlib.util
import logging
import os
import time
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import risingbandits as rb

# Commands' output is compared line by line: the one-time "compiling kernels" notice would make
# it depend on the state of the kernel cache (the tests of the notice remove this).
os.environ.setdefault("RISINGBANDITS_NOTICES_SHOWN", "compiling")

REPO = Path(__file__).resolve().parents[1]
# The same place the library looks (risingbandits.instances.families.default_curves_dir).
IMDB_CURVES = Path(
    os.environ.get(
        "RISINGBANDITS_IMDB_CURVES", REPO.parent / "shared" / "data" / "imdb-learning-curves"
    )
)


def load_script(relative: str, name: str) -> Any:
    """The repository's script at ``relative`` (an example, a tuning script) as a module."""
    spec = importlib.util.spec_from_file_location(name, REPO / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def random_ltf(
    rng: np.random.Generator, n_arms: int, horizon: int, noise: rb.Noise
) -> rb.RisingInstance:
    b = rng.uniform(0.1, 1.0, n_arms)
    t_sat = rng.uniform(0.05 * horizon, horizon, n_arms)
    return rb.ltf(b, t_sat, horizon, noise)


@pytest.fixture
def small_instance() -> rb.RisingInstance:
    return random_ltf(np.random.default_rng(7), 4, 400, rb.Noise("gaussian", 0.1))


@pytest.fixture
def imdb_curves_dir() -> Path:
    if not (IMDB_CURVES / "curves.npz").is_file():
        pytest.skip(f"IMDB learning curves not found at {IMDB_CURVES} (shared data folder absent)")
    return IMDB_CURVES


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache folder for this test (``RISINGBANDITS_CACHE_DIR``): live-v1's tasks."""
    monkeypatch.setenv("RISINGBANDITS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def lcdb_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small LCDB folder (``tests/lcdb_fixture.py``) as the LCDB source, with its parsed-table
    cache under ``tmp_path`` (the compiled-kernel cache stays where it is)."""
    from lcdb_fixture import write_lcdb
    from risingbandits.instances import lcdb_table

    folder = write_lcdb(tmp_path / "lcdb")
    monkeypatch.setenv("RISINGBANDITS_LCDB_DIR", str(folder))
    monkeypatch.setattr(lcdb_table, "user_cache_root", lambda: tmp_path / "cache")
    return folder


# Under ``pytest -n N`` (pytest-xdist) each worker takes whole files (``--dist loadfile``), so a
# file's module and session fixtures are computed once; these files also share a worker: the
# quick reproduction (a session fixture), and one local Ray cluster at a time. They start first,
# being the longest.
SHARED_WORKER = {
    "test_reproduce.py": "quick reproduction",
    "test_reproduce_targets.py": "quick reproduction",
    "test_integrations_ray.py": "ray",
    "test_integrations_examples.py": "ray",
}


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedFiles(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return SHARED_WORKER.get(Path(path).name, path)

    return SharedFiles(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.path.name not in SHARED_WORKER)  # stable: files in order


@pytest.fixture(scope="session")
def reproduction_quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``risingbandits reproduce all --quick``, run once and shared by the reproduction tests."""
    from typer.testing import CliRunner

    from risingbandits.cli import app

    if not (IMDB_CURVES / "curves.npz").is_file():
        pytest.skip(f"IMDB learning curves not found at {IMDB_CURVES}")
    out = tmp_path_factory.mktemp("reproduce") / "out"
    args = ["reproduce", "all", "--quick", "--out", str(out), "--workers", "2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return out


# -- a local Ray instance and Ray Tune's logs (test_integrations_ray*.py) --


class LocalRay:
    """A local Ray instance of ``cpus`` CPUs for a test module, started again before a test
    when the ones before it left a CPU held: Ray 2.60 can keep the CPU of a placement group
    removed right after it was requested, and Tune's actor reuse does that
    (``examples/ray_placement_group_leak.py``); a trial needing every CPU then waited until
    Tune's time limit. ``wait``: how long the CPUs of actors still stopping may take to come
    back before the instance counts as leaking."""

    def __init__(self, cpus: int = 2, wait: float = 10.0) -> None:
        self.cpus = cpus
        self.wait = wait
        self.restarts = 0
        self._scope: ExitStack | None = None

    def ready(self) -> None:
        """Every CPU free: the running instance, or a new one (with a warning, so that the test
        log shows it)."""
        if self._scope is not None and not self._all_free():
            self.close()
            self.restarts += 1
            warnings.warn(
                f"a CPU was still held {self.wait:g} s after the earlier tests: Ray started again",
                stacklevel=2,
            )
        if self._scope is None:
            from risingbandits.integrations.ray_tune import local_ray

            scope = ExitStack()
            scope.enter_context(local_ray(num_cpus=self.cpus))
            self._scope = scope

    def close(self) -> None:
        if self._scope is not None:
            scope, self._scope = self._scope, None
            scope.close()

    def _all_free(self) -> bool:
        import ray

        deadline = time.monotonic() + self.wait
        while ray.available_resources().get("CPU", 0) < self.cpus:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[LocalRay]:
    """The test module's local Ray instance (2 CPUs), shut down after its last test."""
    instance = LocalRay()
    try:
        yield instance
    finally:
        instance.close()


@pytest.fixture
def cluster(ray_instance: LocalRay) -> LocalRay:
    """The module's Ray instance with every CPU free when the test starts."""
    ray_instance.ready()
    return ray_instance


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def collected(name: str, level: int) -> Iterator[list[str]]:
    """The messages of logger ``name`` at ``level`` and above in the block ("ray" does not
    propagate)."""
    handler = Collect()
    handler.setLevel(level)
    logger = logging.getLogger(name)
    logger.addHandler(handler)
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)


@pytest.fixture
def tune_log_warnings() -> Iterator[list[str]]:
    """The warnings of Ray's logger callbacks during the test."""
    with collected("ray.tune.logger", logging.WARNING) as messages:
        yield messages


@pytest.fixture
def tune_errors() -> Iterator[list[str]]:
    """The errors Tune's controller logs during the test (a scheduler callback that raised is
    logged there, and the run goes on)."""
    with collected("ray.tune.execution.tune_controller", logging.ERROR) as messages:
        yield messages
