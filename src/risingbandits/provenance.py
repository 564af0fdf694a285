"""Which code computed a result: a digest of the modules its rows depend on.

Kept rows (a sweep's store, the kept task files of ``reproduce peers`` and ``deadlines``)
record it, so rows computed by other code (a policy changed, another version installed) are
neither mixed with this code's nor reported as if this code had made them. The library's
version alone does not tell: it changes with releases, not with every change of a policy.
Presentation (the command line, plots, the report's sections, the analysis of rows) is left out:
editing it changes no row.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from pathlib import Path

ROW_CODE = (
    "_jit.py",
    "experiments",
    "instances",
    "modelselect",
    "policies",
    "regret.py",
    "rewards.py",
    "seeding.py",
    "simulate.py",
    "simulate_budget.py",
)
"""The modules and subpackages (relative to the package) every row depends on."""


@functools.cache
def code_digest(*extra: str) -> str:
    """:func:`tree_digest` of this package's :data:`ROW_CODE` and ``extra`` modules (paths
    relative to the package, e.g. ``"reproduce/peers.py"``)."""
    return tree_digest(Path(__file__).parent, (*ROW_CODE, *extra))


def tree_digest(root: Path, names: Iterable[str]) -> str:
    """sha256 of the ``.py`` files ``names`` (files, or folders searched recursively) under
    ``root``: each file's path and bytes, in a fixed order."""
    digest = hashlib.sha256()
    for name in sorted(set(names)):
        path = root / name
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for file in files:
            digest.update(file.relative_to(root).as_posix().encode() + b"\0")
            digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()
