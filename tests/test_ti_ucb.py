"""TI-UCB (reconstruction, second version): index, bonus, prediction point, change detection.

Expected values are worked out by hand in the comments or recomputed with numpy least squares
from the rule as DECISIONS.md row 7 states it, independently of the kernel.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.policies import make_policy
from risingbandits.policies.machinery.kernel import select_one, update_one
from risingbandits.seeding import policy_rng
from test_rising_baselines import feed


def pull_arm0(state, xs: list[float]) -> list[int]:  # type: ignore[no-untyped-def]
    """Feed ``xs`` as arm 0's pulls (round = pull); the segment start after each pull."""
    rng = policy_rng(0)
    starts = []
    for n, x in enumerate(xs, start=1):
        update_one(state, 0, x, n, rng)
        starts.append(int(state.segment_start[0]))
    return starts


def reference_starts(xs: list[float], omega: int, gamma: float) -> list[int]:
    """The drop rule with numpy fits: while the segment holds >= 2 omega pulls, lines on the
    pulls (n - 2 omega, n - omega] and (n - omega, n] predict pull n + 1; a drop >= gamma starts
    a new segment at n - omega + 1."""
    start, starts = 1, []
    for n in range(1, len(xs) + 1):
        if n - start + 1 >= 2 * omega:
            preds = []
            for lo in (n - 2 * omega, n - omega):
                ls = np.arange(lo + 1, lo + omega + 1, dtype=float)
                slope, icpt = np.polyfit(ls, xs[lo : lo + omega], 1)
                preds.append(icpt + slope * (n + 1))
            if preds[0] - preds[1] >= gamma:
                start = n - omega + 1
        starts.append(start)
    return starts


def test_index_prediction_point_and_bonus_by_hand() -> None:
    # Arm 0: X = 0.1, 0.3, 0.2, 0.6 at pulls 1..4: mean_l = 2.5, mean = 0.3, S_ll = 5,
    # S_ly = 0.7, slope 0.14. Next pull 5: 0.3 + 0.14 x 2.5 = 0.65; round t = 9:
    # 0.3 + 0.14 x 6.5 = 1.21. Bonus sqrt(4 ln(1/delta) / 4) = sqrt(ln 100), with
    # delta_t = 1/t: sqrt(ln 9). Arm 1 has a single pull: +inf.
    history = [(0, 0.1), (0, 0.3), (1, 0.5), (0, 0.2), (0, 0.6)]
    cases = [
        ({}, 0.65, math.sqrt(math.log(100))),
        ({"predict_at": "round"}, 1.21, math.sqrt(math.log(100))),
        ({"delta_schedule": "1/t"}, 0.65, math.sqrt(math.log(9))),
    ]
    for params, prediction, bonus in cases:
        state = make_policy("ti-ucb", **params).init_state(2, 50)
        assert feed(state, history) == 6
        select_one(state, 9, policy_rng(0))
        assert state.terms[0, 0] == pytest.approx(prediction, abs=1e-12)
        assert state.terms[0, 1] == pytest.approx(bonus, abs=1e-12)
        assert state.scores[0] == state.terms[0, 0] + state.terms[0, 1]
        assert state.scores[1] == math.inf


def test_a_drop_starts_a_new_segment_at_the_right_pull_and_the_index_fits_it() -> None:
    # omega = 4, gamma = 0.3. Pulls 1..8 on the line 0.1 (l - 1): both windows predict 0.8 at
    # pull 9, no drop. Pull 9 = 0.2: the older window (pulls 2..5, exact line) predicts 0.9 at
    # pull 10; the newer (pulls 6..9 = 0.5, 0.6, 0.7, 0.2; mean 0.5, S_ly = -0.4, slope -0.08)
    # predicts 0.5 - 0.08 x 2.5 = 0.3: a drop of 0.6 >= 0.3, so the segment becomes pulls 6..9
    # and arm 0's index is that window's line at pull 10 (0.3) + sqrt(4 ln 100 / 4).
    state = make_policy("ti-ucb", omega=4, gamma=0.3).init_state(2, 50)
    xs = [0.1 * (n - 1) for n in range(1, 9)] + [0.2]
    assert pull_arm0(state, xs) == [1] * 8 + [6]
    update_one(state, 1, 0.5, 10, policy_rng(0))
    update_one(state, 1, 0.5, 11, policy_rng(0))
    select_one(state, 12, policy_rng(0))
    assert state.terms[0, 0] == pytest.approx(0.3, abs=1e-12)
    assert state.terms[0, 1] == pytest.approx(math.sqrt(math.log(100)), abs=1e-12)
    assert state.terms[1, 0] == pytest.approx(0.5, abs=1e-12)  # two pulls of 0.5: a flat line
    assert state.terms[1, 1] == pytest.approx(math.sqrt(2 * math.log(100)), abs=1e-12)


def test_detection_fires_again_on_a_later_plateau() -> None:
    # Rise, plateau, rise again, plateau: each end of a rise is a drop of the older window's
    # prediction; the kernel's segment starts equal the numpy reference at every pull.
    omega, gamma = 50, 0.3
    n = np.arange(1, 1_201)
    xs = np.minimum(0.006 * n, 0.3) + np.clip(0.006 * (n - 600), 0.0, 0.5)
    state = make_policy("ti-ucb", omega=omega, gamma=gamma).init_state(2, 1_200)
    starts = pull_arm0(state, xs.tolist())
    expected = reference_starts(xs.tolist(), omega, gamma)
    assert starts == expected
    changes = sorted(set(expected) - {1})
    assert len(changes) == 2 and 50 < changes[0] < 150 and 600 < changes[1] < 750


def test_a_straight_noisy_line_starts_no_segment() -> None:
    rng = np.random.default_rng(0)
    ls = np.arange(1, 3_001)
    xs = (0.1 + 2e-4 * ls + rng.normal(0.0, 0.1, ls.size)).tolist()
    state = make_policy("ti-ucb").init_state(2, 3_000)  # omega = 100, gamma = 0.3
    assert set(pull_arm0(state, xs)) == {1}
    assert reference_starts(xs, 100, 0.3)[-1] == 1
    # The first version's slope-ratio test calls the same line converged almost at once.
    old = make_policy("ti-ucb", detector="slope-ratio").init_state(2, 3_000)
    first = next(n for n, s in enumerate(pull_arm0(old, xs), start=1) if s != 1)
    assert 100 <= first <= 200 and bool(old.converged[0])


def test_slope_ratio_detector_is_the_first_version_test() -> None:
    # X = min(0.6, 0.01 n): the halves of the last 20 pulls have equal slopes until the flat
    # part reaches the newer half; then the arm is converged for good and ranked by its
    # segment mean (the newer half at detection, then every later pull).
    omega, gamma = 20, 0.3
    state = make_policy("ti-ucb", omega=omega, gamma=gamma, detector="slope-ratio").init_state(
        2, 200
    )
    ys = [min(0.6, 0.01 * n) for n in range(1, 121)]
    detected = None
    rng = policy_rng(0)
    for n, y in enumerate(ys, start=1):
        update_one(state, 0, y, n, rng)
        if detected is None and n >= omega:
            ls = np.arange(1, n + 1, dtype=float)
            old = np.polyfit(ls[n - omega : n - 10], ys[n - omega : n - 10], 1)[0]
            new = np.polyfit(ls[n - 10 : n], ys[n - 10 : n], 1)[0]
            if new <= 1e-12 or (old > 0 and new <= (1 - gamma) * old + 1e-12):
                detected = n
        assert bool(state.converged[0]) == (detected is not None)
    assert detected is not None and 60 < detected <= 60 + omega
    start = detected - 10 + 1
    assert state.segment_start[0] == start
    update_one(state, 1, 0.3, 121, rng)
    update_one(state, 1, 0.3, 122, rng)
    select_one(state, 123, rng)
    seg = ys[start - 1 :]
    assert state.terms[0, 0] == pytest.approx(np.mean(seg), abs=1e-12)
    assert state.terms[0, 1] == pytest.approx(math.sqrt(4 * math.log(100) / len(seg)))


def test_trace_terms_add_up_and_variants_are_labelled() -> None:
    res = rb.simulate(
        rb.intro(600), make_policy("ti-ucb", predict_at="round"), 600, [1], trace=True
    )
    assert res.trace is not None and res.trace.term_names == ("prediction", "bonus")
    finite = np.isfinite(res.trace.index)
    np.testing.assert_allclose(
        res.trace.terms.sum(axis=-1)[finite], res.trace.index[finite], rtol=1e-12
    )
    info = make_policy("ti-ucb", detector="slope-ratio").info()
    assert info["reconstruction"] is True and "sigma" not in info["params"]
    with pytest.raises(ValueError, match="detector='cusum' is not allowed: use one of drop"):
        make_policy("ti-ucb", detector="cusum")
