"""Issue 23, items 6 and 12: a model selector's memory and checkpoints follow the steps made, not
the budget; growth never changes a choice; what it reports is plain JSON."""

from __future__ import annotations

import inspect
import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from risingbandits.modelselect import ModelSelector
from risingbandits.policies import POLICIES
from risingbandits.policies.machinery import capacity

NAMES = sorted(POLICIES)


def curve(arm: int, n: int) -> float:
    """A rising, slightly noisy score of candidate ``arm`` after its n-th step."""
    noise = 0.02 * np.sin(7.0 * n + arm)
    return float(np.clip((0.5 + 0.1 * (arm % 4)) * n / (n + 30.0) + noise, 0.0, 1.0))


def run_parallel(sel: ModelSelector, start: int, stop: int) -> list[int]:
    """Steps ``start..stop - 1`` with 3 pulls in flight (the oldest reports first): a candidate
    is added after step 300, one retired after 600, the budget raised after 1,000; the
    candidates started, in order."""
    started: list[int] = []
    for step in range(start, stop):
        while len(sel.in_flight) < 3 and sel.remaining > 0:
            started.append(sel.select())
        arm = sel.in_flight[0]
        sel.update(arm, curve(arm, sel.pulls[arm] + 1))
        if step == 300:
            sel.add_candidate("late")
        if step == 600 and not sel.in_flight.count(0):
            sel.retire(0)
        if step == 1_000:
            sel.set_budget(sel.budget + 500)
    return started


@pytest.mark.parametrize("name", NAMES)
def test_growth_never_changes_a_choice_with_pulls_in_flight_and_changes(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    grown = ModelSelector(4, 1_500, name, seed=2)
    bound = grown._run.bound
    with_growth = run_parallel(grown, 0, 1_200)
    assert grown._run.capacity > capacity.INITIAL_CAPACITY or not (bound.pulls or bound.rounds)
    monkeypatch.setattr(capacity, "INITIAL_CAPACITY", 2**60)  # every state holds its horizon
    whole = ModelSelector(4, 1_500, name, seed=2)
    assert whole._run.capacity == 1_500
    assert run_parallel(whole, 0, 1_200) == with_growth
    assert grown.summary() == whole.summary()


@pytest.mark.parametrize("name", NAMES)
def test_a_budget_of_10_11_is_served_and_saved_small(name: str, tmp_path: Path) -> None:
    sizes = []
    for budget in (1_000, 10**11):
        sel = ModelSelector(5, budget, name, seed=1)
        for _ in range(300):
            arm = sel.select()
            sel.update(arm, curve(arm, sel.pulls[arm] + 1))
        assert sel._run.nbytes < 2_000_000
        sel.save(tmp_path / "sel.json")
        sizes.append((tmp_path / "sel.json").stat().st_size)
        again = ModelSelector.load(tmp_path / "sel.json")
        assert again.t == 300 and again.budget == budget
    assert sizes[1] < 1.5 * sizes[0]


def test_ten_thousand_candidates_take_megabytes_not_gigabytes() -> None:
    """The issue's case: ModelSelector(10000, budget=100_000) took 7.8 GB (K x T prefix sums)."""
    sel = ModelSelector(10_000, 100_000)
    assert sel._run.nbytes < 8_000_000
    for _ in range(1_000):
        arm = sel.select()
        sel.update(arm, curve(arm, sel.pulls[arm] + 1))
    assert sel._run.nbytes < 8_000_000


@pytest.mark.parametrize("name", NAMES)
def test_a_resumed_run_continues_exactly_after_growth(name: str, tmp_path: Path) -> None:
    straight = run_parallel(ModelSelector(4, 2_000, name, seed=5), 0, 1_600)
    first = ModelSelector(4, 2_000, name, seed=5)
    resumed = run_parallel(first, 0, 900)
    first.save(tmp_path / "sel.json")  # pulls in flight, candidates changed, grown twice or more
    again = ModelSelector.load(tmp_path / "sel.json")
    assert again.in_flight == first.in_flight and len(again.in_flight) == 2
    resumed += run_parallel(again, 900, 1_600)
    assert resumed == straight


@pytest.mark.parametrize(("first", "then"), [(12, 20), (50, 500), (1_000, 300)])
def test_a_run_saved_after_a_new_budget_loads(first: int, then: int, tmp_path: Path) -> None:
    """A capacity cut at a budget (12 pulls for a budget of 12) is rounded up to one a run can
    have when the budget grows: the checkpoint was refused after ``set_budget(20)``."""
    sel = ModelSelector(3, first, "cure-ucb", seed=0)
    for _ in range(min(first, then) - 1):
        arm = sel.select()
        sel.update(arm, curve(arm, sel.pulls[arm] + 1))
    sel.set_budget(then)
    sel.save(tmp_path / "sel.json")
    again = ModelSelector.load(tmp_path / "sel.json")
    while not sel.done:
        arm, other = sel.select(), again.select()
        assert arm == other
        sel.update(arm, curve(arm, sel.pulls[arm] + 1))
        again.update(arm, curve(arm, again.pulls[arm] + 1))


def test_a_count_of_candidates_beyond_the_budget_is_refused_before_naming_them() -> None:
    """ModelSelector(10**7, budget=10) built 10**7 names (~900 MB, 2 s) before refusing."""
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"budget=10 is not allowed: use an integer >= 1000"):
            ModelSelector(10**7, 10)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def test_a_budget_beyond_2_53_is_one_line() -> None:
    with pytest.raises(ValueError, match=r"budget=\d+ is not allowed: use at most 2\*\*53") as info:
        ModelSelector(3, 2**53 + 1)
    assert "\n" not in str(info.value)


def test_every_public_property_and_the_summary_are_plain_json() -> None:
    sel = ModelSelector(["a", "b", "c"], 40, "cure-ucb", seed=1, trace=True)
    props = [n for n, m in inspect.getmembers(ModelSelector) if isinstance(m, property)]
    assert {"pulls", "last_scores", "in_flight", "history"} <= set(props)
    for steps in (0, 7):
        for _ in range(steps):
            arm = sel.select()
            sel.update(arm, curve(arm, sel.pulls[arm] + 1), metrics={"loss": np.float32(0.5)})
        for name in props:
            value = getattr(sel, name)
            assert json.loads(json.dumps(value, allow_nan=False)) == json.loads(
                json.dumps(value)
            ), name
        json.dumps(sel.summary(), allow_nan=False)
    assert sel.pulls == [int(n) for n in sel.pulls] and sum(sel.pulls) == 7
    assert all(isinstance(x, float) for x in sel.last_scores if x is not None)
    assert ModelSelector(3, 10).last_scores == [None, None, None]
