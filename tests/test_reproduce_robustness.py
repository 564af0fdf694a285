"""The robustness section's logic: a variant stands in for its default policy and every claim it
touches is re-judged with the claim's own rule (crafted results, no simulation)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import rankdata

from risingbandits.reproduce.claims import (
    CLAIMS,
    NOT_REPRODUCED,
    NOT_RUN,
    REPRODUCED,
    Evidence,
    judge_all,
)
from risingbandits.reproduce.data import Results
from risingbandits.reproduce.robustness import assess, variants
from risingbandits.reproduce.settings import PAPER_POLICIES, POLICY_VARIANTS

HORIZONS = (10_000, 50_000)
UNITS = 12
ROUND = "ti-ucb[predict_at=round]"


def regrets() -> dict[str, np.ndarray]:
    """Per-unit regrets: TI-UCB* is best, CURE-UCB second; TI-UCB* predicting at t is worst."""
    rng = np.random.default_rng(0)
    base = {p: 1_000.0 * (k + 2) + rng.normal(0, 50, UNITS) for k, p in enumerate(PAPER_POLICIES)}
    base["ti-ucb"] = 500.0 + rng.normal(0, 50, UNITS)
    base[ROUND] = 50_000.0 + rng.normal(0, 50, UNITS)
    for v in POLICY_VARIANTS:  # the other variants behave like their default
        base.setdefault(v.label, base[v.name])
    return base


def results(labels: Sequence[str], values: dict[str, np.ndarray]) -> Results:
    units = tuple((f"ltf-v1/0/{u}", 0) for u in range(UNITS))
    matrix = np.vstack([values[p] for p in labels])
    ranks = np.apply_along_axis(rankdata, 0, matrix)
    return Results(
        tuple(labels),
        frozenset({"ti-ucb", "red-ae", ROUND} & set(labels)),
        frozenset(),
        HORIZONS,
        {(p, h): values[p] * h / 50_000 for p in labels for h in HORIZONS},
        {(p, h): ranks[k] for k, p in enumerate(labels) for h in HORIZONS},
        {},
        {h: units for h in HORIZONS},
    )


def test_a_variant_stands_in_for_its_default_and_can_change_a_verdict() -> None:
    values = regrets()
    loaded: list[tuple[tuple[str, ...], tuple[str, ...]]] = []

    def load(*names: str, labels: Sequence[str] | None = None) -> Results:
        assert labels is not None
        loaded.append((names, tuple(labels)))
        return results(labels, values)

    ev = Evidence({"ltf": results(PAPER_POLICIES, values)})
    defaults = judge_all(ev)
    assert defaults[3].verdict == NOT_REPRODUCED  # claim 4: TI-UCB* has the lowest regret
    stores = {"ltf", "ltf-variants"}
    rob = assess(ev, defaults, stores, load)
    assert [v.key for v in variants(stores)] == [v.key for v in rob.variants]
    assert ROUND in {v.key for v in rob.variants}
    # the variant's runs were read in TI-UCB's place, from the main and the variants store
    assert (
        ("ltf", "ltf-variants"),
        tuple(ROUND if p == "ti-ucb" else p for p in PAPER_POLICIES),
    ) in loaded
    swapped = rob.evidence[ROUND].results["ltf"]
    assert swapped.labels == PAPER_POLICIES
    np.testing.assert_allclose(swapped.regret["ti-ucb", 50_000], values[ROUND])
    # with the variant in place CURE-UCB is lowest everywhere: claim 4 flips
    assert rob.verdicts[4, ROUND] == REPRODUCED
    assert rob.verdicts[4, "et-swgts[window=pulls]"] == NOT_REPRODUCED
    assert (1, ROUND) not in rob.verdicts  # claim 1 reads no baseline
    rows = rob.rows()
    assert {"claim": 4, "variant": "default", "verdict": NOT_REPRODUCED} in rows
    assert {"claim": 4, "variant": ROUND, "verdict": REPRODUCED} in rows
    assert all(set(r) == {"claim", "variant", "verdict"} for r in rows)
    assert not any(r["claim"] == 2 for r in rows)  # intro not run: claim 2 not run
    sentence = rob.sentence(CLAIMS[3])
    assert "depends on our choices" in sentence and "reproduced with TI-UCB*" in sentence
    assert rob.defaults[2] == NOT_RUN


def test_no_variant_store_means_no_variant() -> None:
    assert variants({"ltf"}) == []
    keys = [v.key for v in variants({"ltf", "ltf-noise-0.2", "concave", "concave-v2"})]
    assert keys == ["concave-v2", "noise gaussian:0.2"]
