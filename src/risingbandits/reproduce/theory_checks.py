"""The theory findings of the reproduction report (from :mod:`risingbandits.theory`).

* Thm. 5.2 (strict dominance in deterministic LTF): the exact counterexamples of docs/theory.md
  re-checked, and a seeded search (:func:`risingbandits.theory.dominance.search`) with its counts;
* Section 3.1: the intro instance's switching horizon and the price any horizon-agnostic policy
  pays at T = 10,000 or 30,000 (:func:`~risingbandits.theory.horizon_awareness.agnostic_price`);
* Thm. 5.4: the regret bound (minimum over the q grid) at each horizon beside CURE-UCB's measured
  regret, instance by instance.

The first two do not depend on any sweep and are kept as JSON (``OUT/theory-<size>.json``,
written atomically with a checksum, and the digest of the code in its parameters), so a re-run
reuses them unless the file is damaged or the code changed; the bound is recomputed from the
stores (it takes a second).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from operator import methodcaller
from pathlib import Path
from typing import Any

from risingbandits.instances import RisingInstance
from risingbandits.outputs import atomic_write
from risingbandits.provenance import code_digest
from risingbandits.theory.bound import best_bound
from risingbandits.theory.dominance import PAPER_HORIZON, SMALL_HORIZON, check, search
from risingbandits.theory.exact import ExactLTF
from risingbandits.theory.horizon_awareness import agnostic_price, intro_switching_horizon

SEARCH_SEED = 0
SHRINK = 3
KNOWN_COUNTEREXAMPLES: tuple[tuple[tuple[str, ...], tuple[str, ...], int], ...] = (
    (("1/2", "1/3"), ("2", "1"), 4),
    (("17/20", "7/20"), ("272017/7", "16000"), 48_002),
    (("18/65", "33/37"), ("3058", "9851"), 9_175),
)
"""Counterexamples to Thm. 5.2 listed in docs/theory.md: (b, t_sat, T)."""


def _case(case: Any) -> dict[str, Any]:
    d = case.to_dict()
    return {
        "b": d["b"],
        "t_sat": d["t_sat"],
        "horizon": d["horizon"],
        "regret_cure": d["regret_cure_exact"],
        "regret_red": d["regret_red_exact"],
        "excess": float(case.excess),
        "holds": d["holds"],
    }


def run_theory_checks(instances: int) -> dict[str, Any]:
    """Dominance search with ``instances`` instances, the known counterexamples, Section 3.1."""
    report = search(instances, PAPER_HORIZON, seed=SEARCH_SEED, shrink=SHRINK)
    paper_scale = [v for v in report.violations if v.case.horizon > SMALL_HORIZON]
    price = agnostic_price()
    return {
        "params": theory_params(instances),
        "switch": intro_switching_horizon(),
        "price": {**asdict(price), "value": price.value},
        "search": {
            "instances": sum(report.instances.values()),
            "cases": report.tried,
            "by_family": report.by_family(),
            "violations": len(report.violations),
            "paper_scale_violations": len(paper_scale),
            "max_excess": max((float(v.case.excess) for v in report.violations), default=0.0),
            "minimal": [
                {"family": v.family, **_case(v.minimal)}
                for v in report.violations
                if v.minimal is not None
            ],
            "first_paper_scale": [{"family": v.family, **_case(v.case)} for v in paper_scale[:3]],
        },
        "known": [
            _case(check(ExactLTF.create(b, t), horizon)) for b, t, horizon in KNOWN_COUNTEREXAMPLES
        ],
    }


def theory_params(instances: int) -> dict[str, Any]:
    """What the kept checks depend on: the search's parameters and the code (the theory
    modules and this one, :func:`~risingbandits.provenance.code_digest`)."""
    return {
        "dominance_instances": instances,
        "max_horizon": PAPER_HORIZON,
        "seed": SEARCH_SEED,
        "shrink": SHRINK,
        "code": code_digest("theory", "reproduce/theory_checks.py"),
    }


def _checksum(checks: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(checks, sort_keys=True).encode()).hexdigest()


def load_theory(path: Path, instances: int) -> dict[str, Any] | None:
    """The checks kept at ``path`` when they were made with the same parameters and code and
    are whole (their checksum), else None: a missing, damaged or stale file is computed again."""
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(kept, dict) or kept.get("params") != theory_params(instances):
        return None
    checks = {k: v for k, v in kept.items() if k != "checksum"}
    return checks if kept.get("checksum") == _checksum(checks) else None


def keep_theory(path: Path, checks: dict[str, Any]) -> None:
    """Keep ``checks`` at ``path``, atomically, with their checksum (read back by
    :func:`load_theory`)."""
    text = json.dumps({**checks, "checksum": _checksum(checks)}, indent=1).encode()
    atomic_write(path, methodcaller("write", text))


@dataclass(frozen=True)
class BoundRow:
    """Thm. 5.4's bound on one instance at one horizon beside CURE-UCB's mean regret."""

    instance: str
    horizon: int
    bound: float
    q: float
    regret: float

    @property
    def holds(self) -> bool:
        return self.regret <= self.bound

    @property
    def vacuous(self) -> bool:
        """No better than the trivial Reg(T) <= T."""
        return self.bound >= self.horizon


def bound_rows(
    instances: Sequence[RisingInstance],
    regret: Mapping[int, Mapping[str, float]],
    eps: float,
    sigma: float,
) -> list[BoundRow]:
    """The bound (best q of the default grid) for each instance at each horizon of ``regret``
    (``{T: {instance name: CURE-UCB's mean regret}}``)."""
    rows = []
    for inst in instances:
        for horizon, by_instance in sorted(regret.items()):
            b = best_bound(inst, horizon, eps, sigma)
            rows.append(BoundRow(inst.name, horizon, b.total, b.q, by_instance[inst.name]))
    return rows
