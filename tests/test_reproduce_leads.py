"""The rules behind the model-selection recommendation and the held-out verdicts, on results
built by hand (``reproduce/leads.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from risingbandits.reproduce.data import Results
from risingbandits.reproduce.leads import (
    budget_ranges,
    criteria_counts,
    heldout_cells,
    lead,
    overall_choice,
)
from risingbandits.reproduce.sections.budgets import Setting
from risingbandits.reproduce.sections.common import per_horizon_table
from risingbandits.reproduce.sections.heldout import every_policy
from risingbandits.reproduce.settings import HELDOUT_POLICY

UNITS = 40
HORIZONS = (10, 20, 30)


def results(
    gaps: dict[str, dict[int, np.ndarray]], regrets: dict[str, dict[int, np.ndarray]]
) -> Results:
    labels = tuple(gaps)
    return Results(
        labels,
        frozenset(),
        frozenset(),
        HORIZONS,
        {(p, h): regrets[p][h] for p in labels for h in HORIZONS},
        {},
        {},
        {h: tuple((f"x/0/{u}", 0) for u in range(UNITS)) for h in HORIZONS},
        {(p, h): gaps[p][h] for p in labels for h in HORIZONS},
    )


def noise(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 1, UNITS)


def test_a_lead_is_significant_only_when_its_paired_interval_is_above_zero() -> None:
    common = noise(0) * 100  # a large unit effect that pairing removes
    gaps = {
        "a": {h: common + 1.0 + 0.1 * noise(h) for h in HORIZONS},
        "b": {h: common + 1.2 + 0.1 * noise(h + 1) for h in HORIZONS},
        "c": {h: common + 1.0 + 0.1 * noise(h + 2) for h in HORIZONS},
    }
    gaps["c"][30] = common + 0.5 + 0.1 * noise(99)
    r = results(gaps, gaps)
    first = lead(r, 10, "final_gap")
    assert {first.best, first.runner_up} == {"a", "c"} and not first.significant
    assert first.margin.low < 0 < first.margin.high
    clear = lead(r, 30, "final_gap")
    assert clear.best == "c" and clear.significant  # unpaired intervals (width ~60) overlap
    assert clear.best_ci.high > r.ci(clear.runner_up, 30, "final_gap").low
    assert lead(r, 30, "final_gap", among=["a", "b"]).best == "a"


def test_budget_ranges_group_consecutive_budgets_with_one_leader() -> None:
    low, high = (
        {h: noise(h) * 0.01 + 1 for h in HORIZONS},
        {h: noise(h) * 0.01 + 2 for h in HORIZONS},
    )
    gaps = {"a": dict(low), "b": dict(high)}
    gaps["a"][30], gaps["b"][30] = high[30], low[30]
    regrets = {"a": high, "b": low}
    ranges = budget_ranges("s", results(gaps, regrets))
    assert [(x.policy, x.budgets) for x in ranges] == [("a", (10, 20)), ("b", (30,))]
    assert ranges[0].significant == 2 and [x.best for x in ranges[0].regret] == ["b", "b"]


def test_overall_choice_counts_settings_and_breaks_ties_by_setting_order() -> None:
    low, high = {h: noise(h) + 1 for h in HORIZONS}, {h: noise(h) + 9 for h in HORIZONS}
    r_a = results({"a": low, "b": high}, {"a": low, "b": high})
    r_b = results({"a": high, "b": low}, {"a": high, "b": low})
    assert overall_choice({"1": lead(r_a, 10, "final_gap"), "2": lead(r_b, 10, "final_gap")}) == (
        "a",
        1,
    )
    three = {k: lead(r, 10, "final_gap") for k, r in (("1", r_a), ("2", r_b), ("3", r_b))}
    assert overall_choice(three) == ("b", 2)


@pytest.mark.parametrize(
    ("shift", "lowest", "no_worse"),
    [(-0.5, True, True), (0.0, True, True), (0.5, False, False)],
)
def test_heldout_criteria(shift: float, lowest: bool, no_worse: bool) -> None:
    other = {h: noise(h) + 5 for h in HORIZONS}
    own = {h: other[h] + shift for h in HORIZONS}  # a constant paired difference
    worse = {h: other[h] + 3 for h in HORIZONS}
    values = {HELDOUT_POLICY: own, "ucb1": other, "red-ucb": worse}
    for synthetic in (True, False):
        cells = heldout_cells("s", results(values, values), [20, 30], synthetic)
        for c in cells:
            assert c.regret_rival.best == c.gap_rival.best == "ucb1"
            assert c.gap_no_worse is no_worse
            assert c.lowest_regret is (lowest if synthetic else None)  # (b): synthetic only
            diff = own[c.horizon] - other[c.horizon]
            assert c.gap_rival.margin.mean == pytest.approx(diff.mean())


def test_a_fails_on_any_significantly_lower_policy_not_only_the_best_by_its_mean() -> None:
    other = {h: noise(h) + 5 for h in HORIZONS}
    own = {h: other[h] + 0.1 for h in HORIZONS}
    tight = {h: other[h] + 0.05 for h in HORIZONS}  # 0.05 below the default on every unit
    centred = {h: noise(h + 3) - noise(h + 3).mean() for h in HORIZONS}
    loose = {h: own[h] - 0.06 + 3 * centred[h] for h in HORIZONS}  # the lowest mean, noisy
    values = {HELDOUT_POLICY: own, "sw-ucb": tight, "ucb1": loose}
    for c in heldout_cells("s", results(values, values), HORIZONS, False):
        assert c.gap_rival.best == "ucb1"  # shown as the best other, not significantly lower
        assert c.gap_rival.margin.low <= 0 < c.gap_rival.margin.high
        assert c.gap_lower == ("sw-ucb",) and not c.gap_no_worse


def test_every_policy_is_judged_in_the_defaults_place_by_the_same_rules() -> None:
    other = {h: noise(h) + 5 for h in HORIZONS}
    own = {h: other[h] + 0.5 for h in HORIZONS}  # significantly above ucb1 everywhere
    centred = {h: noise(h + 7) - noise(h + 7).mean() for h in HORIZONS}
    close = {h: other[h] + 0.005 + 0.05 * centred[h] for h in HORIZONS}  # above ucb1, in noise
    values = {HELDOUT_POLICY: own, "ucb1": other, "sw-ucb": close}
    settings = [
        Setting("heldout-ltf", "LTF", results(values, values), "horizon_percents"),
        Setting("select-imdb", "IMDB", results(values, values), "horizons"),  # no (b) here
    ]
    ranked = {p: (a, b) for p, a, b in every_policy(settings)}
    assert ranked["ucb1"] == (6, 3)  # the lowest everywhere: (a) in 6 cells, (b) in 3
    assert ranked[HELDOUT_POLICY] == (0, 0)
    assert ranked["sw-ucb"] == (6, 0)  # never significantly above ucb1, never below it
    assert every_policy(settings)[0][0] == "ucb1"
    default = [c for s in settings for c in heldout_cells(s.store, s.results, HORIZONS, True)]
    assert criteria_counts(default)[0] == ranked[HELDOUT_POLICY][0]


def test_a_per_horizon_table_lists_the_labels_asked_for() -> None:
    per = {p: {h: 1.0 + noise(h) for h in HORIZONS} for p in ("a", "b", "c")}
    r = results(per, per)
    assert [row[0] for row in per_horizon_table(r, HORIZONS).rows] == ["a", "b", "c"]
    table = per_horizon_table(r, HORIZONS, "final_gap", labels=["c", "a"])
    assert [row[0] for row in table.rows] == ["c", "a"]
    assert len(table.header) == 1 + len(HORIZONS)
