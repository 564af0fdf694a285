"""The simulator: reproducibility, common random numbers, checkpoints, rewards, errors."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.policies import make_policy
from risingbandits.rewards import NOISE_BERNOULLI, NOISE_GAUSSIAN, draw_reward, hashed_uniform
from risingbandits.seeding import reward_key

MASK = (1 << 64) - 1

NO_TABLE = np.zeros((0, 0))


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def test_hashed_uniform_matches_python_reference() -> None:
    key = int(reward_key(11))
    for arm, pull, sub in [(0, 1, 0), (3, 17, 1), (9, 50_000, 0)]:
        counter = (arm << 42) ^ (pull << 1) ^ sub
        z = _mix((key + _mix((counter + 0x9E3779B97F4A7C15) & MASK)) & MASK)
        expected = ((z >> 11) + 1.0) * 2.0**-53
        assert hashed_uniform(np.uint64(key), arm, pull, sub) == expected


def test_reward_distributions() -> None:
    means = np.full((1, 20_000), 0.3)
    key = reward_key(0)
    g = np.array(
        [draw_reward(means, NOISE_GAUSSIAN, 0.2, NO_TABLE, key, 0, n) for n in range(1, 20_001)]
    )
    assert abs(g.mean() - 0.3) < 4 * 0.2 / math.sqrt(20_000)
    assert abs(g.std() - 0.2) < 0.01
    b = np.array(
        [draw_reward(means, NOISE_BERNOULLI, 0.0, NO_TABLE, key, 0, n) for n in range(1, 20_001)]
    )
    assert set(np.unique(b)) == {0.0, 1.0}
    assert abs(b.mean() - 0.3) < 4 * math.sqrt(0.21 / 20_000)


def test_same_seed_same_results_different_seed_different() -> None:
    inst = rb.intro(2000)
    pol = make_policy("cure-ucb")
    a = rb.simulate(inst, pol, 2000, [1, 2], record_arms=True)
    b = rb.simulate(inst, pol, 2000, [1, 2], record_arms=True)
    np.testing.assert_array_equal(a.arms, b.arms)
    np.testing.assert_array_equal(a.reward, b.reward)
    assert not np.array_equal(a.arms[0], a.arms[1])  # type: ignore[index]


def test_common_random_numbers_across_policies() -> None:
    """With a seed, the n-th pull of an arm gives the same reward whatever the policy."""
    inst = rb.ltf([0.5, 0.8], [50, 300], 400)
    runs = []
    for name in ("cure-ucb", "ucb1"):
        res = rb.simulate(inst, make_policy(name), 400, [4], record_arms=True)
        assert res.arms is not None
        pol = make_policy(name)
        pol.reset(2, 400, seed=4)
        rewards: dict[tuple[int, int], float] = {}
        counts = [0, 0]
        key = reward_key(4)
        for arm in res.arms[0]:
            counts[arm] += 1
            rewards[(int(arm), counts[arm])] = inst.reward(key, int(arm), counts[arm])
        runs.append(rewards)
    shared = set(runs[0]) & set(runs[1])
    assert len(shared) > 50
    assert all(runs[0][k] == runs[1][k] for k in shared)


def test_realised_reward_is_sum_of_drawn_rewards() -> None:
    inst = rb.intro(300)
    res = rb.simulate(inst, make_policy("ucb1"), 300, [7], record_arms=True)
    assert res.arms is not None
    counts = [0, 0]
    total = 0.0
    for arm in res.arms[0]:
        counts[arm] += 1
        total += inst.reward(reward_key(7), int(arm), counts[arm])
    assert res.reward[0] == pytest.approx(total)
    assert res.regret[0] == pytest.approx(
        inst.oracle.value(300) - inst.oracle.collected(res.pulls[0])
    )


def test_simulate_errors() -> None:
    inst = rb.intro(100)
    pol = make_policy("cure-ucb")
    with pytest.raises(ValueError, match="horizon=101"):
        rb.simulate(inst, pol, 101)
    with pytest.raises(ValueError, match="horizon=0"):
        rb.simulate(inst, pol, 0)
    with pytest.raises(ValueError, match="seeds=0"):
        rb.simulate(inst, pol, 10, 0)
    with pytest.raises(ValueError, match=r"seeds\[1\]=-1 is not allowed"):
        rb.simulate(inst, pol, 10, [0, -1])
    for seeds in ("2", None):  # a string is not a list of seeds; the field is seeds
        with pytest.raises(ValueError, match=rf"seeds={seeds!r} is not allowed: use an integer"):
            rb.simulate(inst, pol, 10, seeds)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="uses the horizon"):
        rb.simulate(inst, pol, 100, 1, checkpoints=[50, 100])
    with pytest.raises(ValueError, match="checkpoints"):
        rb.simulate(inst, make_policy("ucb1"), 100, 1, checkpoints=[200])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rb.simulate("intro", "ucb1", 50), "instance='intro' is not allowed: use a Risi"),
        (lambda: rb.simulate_horizons("intro", "ucb1", [50]), "instance='intro' is not allowed"),
        (
            lambda: rb.simulate(rb.intro(100), "ucb1", 50, checkpoints=["a"]),
            r"^checkpoints\[0\]='a' is not allowed: use an integer$",
        ),
        (
            lambda: rb.simulate(rb.intro(100), "ucb1", 50, checkpoints=[10.7]),
            r"^checkpoints\[0\]=10.7 is not allowed",
        ),
        (
            lambda: rb.simulate(rb.intro(100), "ucb1", 50, checkpoints=[10, True]),
            r"^checkpoints\[1\]=True is not allowed",
        ),
        (
            lambda: rb.simulate_horizons(rb.intro(100), "ucb1", [20, 30.5]),
            r"^horizons\[1\]=30.5 is not allowed",
        ),
        (
            lambda: rb.simulate(rb.intro(100), "ucb1", 50, 2**64),
            rf"^seeds=18446744073709551616 is not allowed: use a count in 1..{2**63 - 1} or a",
        ),
    ],
)
def test_bad_arguments_are_one_line(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


def test_seeds_beyond_the_memory_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """10**10 seeds were a MemoryError traceback while the seed list was built."""
    monkeypatch.setattr("risingbandits.instances.memory.available_memory", lambda: 10**9)
    message = (
        r"^seeds=10,000,000,000 is not allowed: their results take at least 1\.0 TB and "
        r"1\.0 GB of memory is available: use fewer seeds$"
    )
    with pytest.raises(ValueError, match=message):
        rb.simulate(rb.intro(100), "ucb1", 50, 10**10)
    with pytest.raises(ValueError, match=message):
        rb.simulate_budget(rb.intro(100), "ucb1", 50.0, 10**10)
    assert rb.simulate(rb.intro(100), "ucb1", 50, 3).regret.shape == (3,)


def test_checkpoints_take_numpy_integers() -> None:
    run = rb.simulate(rb.intro(100), "ucb1", 50, checkpoints=[np.int64(20), 50])
    assert run.checkpoint_horizons == (20, 50)


def test_arguments_are_checked_before_the_first_seed_runs() -> None:
    called: list[int] = []
    for progress in (3, "x"):
        with pytest.raises(ValueError, match=f"progress={progress!r} is not allowed"):
            rb.simulate(rb.intro(100), "ucb1", 50, 2, progress=progress)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=f"progress={progress!r} is not allowed"):
            rb.simulate_horizons(rb.intro(100), "ucb1", [20, 50], progress=progress)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="horizon=101 is not allowed"):  # no run at T = 20 first
        rb.simulate_horizons(
            rb.intro(100), "cure-ucb", [20, 101], progress=lambda d, n: called.append(d)
        )
    assert called == []


def test_simulate_horizons_matches_direct_runs() -> None:
    inst = rb.intro(3000)
    for name in ("cure-ucb", "ucb1"):
        pol = make_policy(name)
        many = rb.simulate_horizons(inst, pol, [1000, 3000], [0, 1])
        for h in (1000, 3000):
            direct = rb.simulate(inst, pol, h, [0, 1])
            np.testing.assert_array_equal(many[h].pulls, direct.pulls)
            np.testing.assert_allclose(many[h].regret, direct.regret)
    by_name = rb.simulate_horizons(inst, "ucb1", [1000, 3000], [0, 1])  # as rb.simulate takes
    np.testing.assert_array_equal(by_name[3000].pulls, many[3000].pulls)
    with pytest.raises(ValueError, match=r"^policy=3 is not allowed: use a Policy or a policy"):
        rb.simulate_horizons(inst, 3, [1000])  # type: ignore[arg-type]


def test_online_object_errors() -> None:
    pol = make_policy("ucb1")
    with pytest.raises(RuntimeError, match="reset"):
        pol.select()
    pol.reset(2, 2, seed=0)
    arm = pol.select()
    assert pol.select() == arm  # select is idempotent until update
    with pytest.raises(ValueError, match="does not match"):
        pol.update(1 - arm, 0.5)
    with pytest.raises(ValueError, match="reward=nan"):
        pol.update(arm, float("nan"))
    pol.update(arm, 0.5)
    pol.update(pol.select(), 0.1)
    assert pol.t == 2 and pol.pulls.sum() == 2
    with pytest.raises(RuntimeError, match="used up"):
        pol.select()
    with pytest.raises(ValueError, match="n_arms=1"):
        pol.reset(1, 10)


class _CountingInt(int):
    """An int that counts how often it is compared for equality."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _CountingInt.compared += 1
        return int(self) == other

    __hash__ = int.__hash__


def test_at_finds_a_checkpoint_without_scanning_them_all() -> None:
    """``at`` over every recorded horizon stays linear (a tuple scan per call made 100,000
    horizons take 148 s)."""
    horizon = 2_000
    run = rb.simulate(rb.intro(horizon), "ucb1", horizon, 2, checkpoints=range(1, horizon + 1))
    counted = replace(run, checkpoint_horizons=tuple(map(_CountingInt, run.checkpoint_horizons)))
    _CountingInt.compared = 0
    views = [counted.at(h) for h in range(1, horizon + 1)]
    assert _CountingInt.compared <= 2 * horizon  # a scan per call: about horizon**2 / 2
    assert np.array_equal(views[-1].pulls, run.pulls)
    assert np.array_equal(views[99].pulls, run.at(100).pulls)
    with pytest.raises(ValueError, match=r"horizon=0 was not recorded: checkpoints are \[1, 2"):
        run.at(0)
