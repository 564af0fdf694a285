"""Exact (rational) simulator of the deterministic CURE-UCB / R-ed-UCB of the paper's App. B."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import risingbandits as rb
from risingbandits.theory.dominance import candidates
from risingbandits.theory.exact import (
    LIBRARY_POLICIES,
    ExactLTF,
    as_fraction,
    event_run,
    run_exact,
    step_run,
)


def float_tolerance(horizon: int) -> float:
    """Exact index margin above which the compiled float policies must pick the same arm.

    Their indices come from float prefix sums (of l X(l), up to T^2/2, for red-ucb-det), so
    the rounding error grows like T^2: measured at most 4e-17 T^2 (red-ucb-det) and 6e-18 T^2
    (cure-ucb-det) on paper-scale instances at T = 50,000 (docs/theory.md); 1e-15 T^2 leaves
    a factor 25."""
    return 1e-15 * horizon * horizon


# -- hand-computed runs ------------------------------------------------------------------------


def test_hand_computed_counterexample() -> None:
    # arm 0: mu = 1/4, 1/2, 1/2, ...  arm 1: mu = 1/3 always.  Rounds 1, 2: arms 0, 1.
    # t = 3: cure 3/8 vs 1/2, red 3/4 vs 1  -> arm 1 for both.
    # t = 4: cure mu(N) only: 1/4 vs 1/3 -> arm 1;  red 1/4 + 3/4 = 1 vs 1/3 -> arm 0.
    # V*(4) = 1/4 + 3/2 = 7/4; cure collects 1/4 + 1 (regret 1/2), red 1/4 + 1/2 + 2/3 (1/3).
    inst = ExactLTF.create(["1/2", "1/3"], [2, 1])
    cure, red = step_run(inst, "cure", 4), step_run(inst, "red", 4)
    assert cure.arms.tolist() == [0, 1, 1, 1]
    assert red.arms.tolist() == [0, 1, 1, 0]
    assert cure.regret() == F(1, 2) and red.regret() == F(1, 3)
    assert cure.pulls() == (1, 3) and red.pulls() == (2, 2)


def test_hand_computed_run_with_ties() -> None:
    # arm 0: mu(n) = n/10 up to 9/10 (t_sat 9); arm 1: 1/2 from its first pull; T = 12.
    # cure: t=3 arm 1 (0.55 vs 2.75); t=4 tie 0.5 = 0.5 -> arm 0; then arm 0's index rises.
    # red: t=3 (0.3 vs 1.5), t=4 (0.4 vs 0.5) arm 1; t=5 tie 0.5 = 0.5 -> arm 0; then arm 0.
    # V*(12) = 4.5 + 2.7 = 7.2; cure collects 5.4 + 1.0, red 4.5 + 1.5.
    inst = ExactLTF.create(["9/10", "1/2"], [9, 1])
    cure, red = event_run(inst, "cure", 12), event_run(inst, "red", 12)
    assert cure.arms.tolist() == [0, 1, 1] + [0] * 9
    assert red.arms.tolist() == [0, 1, 1, 1] + [0] * 8
    assert cure.regret() == F(4, 5) and red.regret() == F(6, 5)
    assert cure.min_gap == 0 and red.min_gap == 0  # both broke an exact tie


def test_start_and_short_horizons() -> None:
    inst = ExactLTF.create(["1/2", "1/3", "1/4"], [2, 1, 5])
    for policy in ("cure", "red"):
        assert run_exact(inst, policy, 2).arms.tolist() == [0, 1]
        assert run_exact(inst, policy, 3).arms.tolist() == [0, 1, 2]
        assert run_exact(inst, policy, 3).min_gap is None  # no index round yet


def test_means_and_cumulative_closed_form() -> None:
    inst = ExactLTF.create(["3/10", "9/10"], ["5/2", 4])
    assert [inst.mean(0, n) for n in range(5)] == [0, F(3, 25), F(6, 25), F(3, 10), F(3, 10)]
    arm1 = [0, F(9, 40), F(9, 20), F(27, 40), F(9, 10), F(9, 10)]
    assert [inst.mean(1, n) for n in range(6)] == arm1
    for arm in (0, 1):
        for n in range(12):
            assert inst.cumulative(arm, n) == sum(inst.mean(arm, k) for k in range(1, n + 1))
    assert inst.value(3) == max(inst.cumulative(0, 3), inst.cumulative(1, 3))


# -- the two simulators agree; R-ed-UCB's prefix is its shorter run ----------------------------

fractions_b = st.builds(F, st.integers(1, 19), st.just(20))
fractions_t = st.builds(F, st.integers(1, 60), st.sampled_from([1, 1, 2, 3, 7]))


@st.composite
def ltf_cases(draw: st.DrawFn) -> tuple[ExactLTF, int]:
    k = draw(st.integers(2, 5))
    b = draw(st.lists(fractions_b, min_size=k, max_size=k))
    t_sat = draw(st.lists(fractions_t, min_size=k, max_size=k))
    if draw(st.booleans()):  # arm 1 with arm 0's slope: exact index ties
        t_sat[1] = t_sat[0] * b[1] / b[0]
    return ExactLTF.create(b, t_sat), draw(st.integers(1, 150))


@settings(max_examples=300, deadline=None)
@given(ltf_cases(), st.sampled_from(["cure", "red"]))
def test_event_run_equals_step_run(case: tuple[ExactLTF, int], policy: str) -> None:
    inst, horizon = case
    step, event = step_run(inst, policy, horizon), event_run(inst, policy, horizon)  # type: ignore[arg-type]
    np.testing.assert_array_equal(event.arms, step.arms)
    assert event.min_gap == step.min_gap
    assert event.regret() == step.regret()
    counted = tuple(int(c) for c in np.bincount(step.arms, minlength=inst.n_arms))
    assert event.pulls() == step.pulls() == counted  # the kept final counts are the arms'


@settings(max_examples=60, deadline=None)
@given(ltf_cases())
def test_red_prefix_is_the_shorter_run(case: tuple[ExactLTF, int]) -> None:
    inst, horizon = case
    long = run_exact(inst, "red", horizon)
    for h in {1, max(1, horizon // 3), horizon}:
        assert run_exact(inst, "red", h).arms.tolist() == long.arms[:h].tolist()
    assert long.pulls_at([horizon, 1]) == [long.pulls(), long.pulls(1)]


def test_paper_scale_event_run_matches_step_run() -> None:
    inst = ExactLTF.create(["843/1000", "1/3", "277/1000"], ["33589.7", 13266, 26855])
    for policy in ("cure", "red"):
        step, event = step_run(inst, policy, 20_000), event_run(inst, policy, 20_000)
        np.testing.assert_array_equal(event.arms, step.arms)
        assert event.regret() == step.regret()


# -- agreement with the compiled float policies of the registry --------------------------------


def test_exact_runs_agree_with_registry_policies() -> None:
    agreed = compared = 0
    for cand in candidates(30, 3_000, seed=4):
        horizon = max(cand.horizons)
        lib = cand.instance.to_instance(horizon)
        for policy, name in LIBRARY_POLICIES.items():
            exact = run_exact(cand.instance, policy, horizon)
            sim = rb.simulate(lib, rb.make_policy(name), horizon, [0], record_arms=True)
            assert sim.arms is not None
            if exact.min_gap is not None and exact.min_gap > float_tolerance(horizon):
                compared += 1
                np.testing.assert_array_equal(sim.arms[0], exact.arms)
                assert sim.regret[0] == pytest.approx(float(exact.regret()), abs=1e-8)
                agreed += 1
    assert compared >= 10 and agreed == compared


def test_counterexample_reproduced_by_registry_policies() -> None:
    # A paper-scale violation of Thm. 5.2 (docs/theory.md): the compiled float policies give
    # the same regrets, so it is not an artefact of the exact simulator. By hand: a0 = 7/320020,
    # a1 = 7/320000, b1/a0 = 16001. Both play arm 1 to N1 = 16001 (t = 16002). Then CURE-UCB
    # compares a0 (1 + (T - t)/2) = 224007/640040 with b1 = 224014/640040 and stays on arm 1
    # to the end (pulls 1, 48001); R-ed-UCB's a0 t exceeds b1 and it plays arm 0 to the end
    # (32001, 16001). Excess = a0 (32001 * 32002/2 - 1) - b1 * 32000 = 5600/16001.
    inst = ExactLTF.create(["17/20", "7/20"], [F(272017, 7), 16000])
    horizon = 48_002
    lib = inst.to_instance(horizon)
    regrets = {}
    for policy, name in LIBRARY_POLICIES.items():
        exact = run_exact(inst, policy, horizon)
        sim = rb.simulate(lib, rb.make_policy(name), horizon, [0])
        assert sim.regret[0] == pytest.approx(float(exact.regret()), abs=1e-6)
        regrets[policy] = (float(sim.regret[0]), exact.regret())
    assert regrets["cure"][1] - regrets["red"][1] == F(5600, 16001)
    assert regrets["cure"][0] - regrets["red"][0] == pytest.approx(5600 / 16001, abs=1e-6)


# -- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("b", "t_sat", "message"),
    [
        (["1/2"], [3], "at least 2 arms"),
        (["1/2", "1/3"], [3], "one t_sat per arm"),
        (["1/2", "1"], [3, 4], "b[arm 1]=1 is not allowed: use 0 < b < 1"),
        (["0", "1/3"], [3, 4], "b[arm 0]=0 is not allowed"),
        (["1/2", "1/3"], [3, 0], "t_sat[arm 1]=0 is not allowed: use t_sat > 0"),
        (["1/2", "x"], [3, 4], "b[arm 1]='x' is not allowed"),
    ],
)
def test_bad_instances(b: list, t_sat: list, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        ExactLTF.create(b, t_sat)


def test_bad_runs_and_fraction_parsing() -> None:
    inst = ExactLTF.create(["1/2", "1/3"], [2, 1])
    with pytest.raises(ValueError, match="horizon=0 is not allowed"):
        run_exact(inst, "cure", 0)
    with pytest.raises(
        ValueError,
        match="horizon=1" + "0" * 30 + " is not allowed: use an integer in 1..10,000,000",
    ):
        run_exact(inst, "red", 10**30)  # numpy's "maximum allowed dimension exceeded" before
    with pytest.raises(ValueError, match="policy='ucb' is not allowed"):
        run_exact(inst, "ucb", 5)  # type: ignore[arg-type]
    assert as_fraction(0.3, "b") == F(3, 10)
    assert as_fraction("0.3", "b") == F(3, 10) == as_fraction("3/10", "b")
    with pytest.raises(ValueError, match="b=nan is not allowed"):
        as_fraction(float("nan"), "b")
