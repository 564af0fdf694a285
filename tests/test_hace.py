"""HACE-UCB (issue 21): successive halving rounds while the budget per candidate is small,
then ACE-UCB on the survivors. Its two regimes are checked against the policies they reuse, arm
for arm; the online selector's default is HACE-UCB."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.instances.families import family_instance
from risingbandits.modelselect import DEFAULT_POLICY, ModelSelector
from risingbandits.policies import make_policy
from risingbandits.policies.budget.successive_halving import halving_schedule
from risingbandits.policies.machinery.kernel import (
    plan_one,
    recommend_one,
    select_one,
    update_one,
)
from risingbandits.policies.machinery.transplant import transplant
from risingbandits.policies.rising.hace import (
    DEPLOY_NOISE,
    LANES,
    LEAST_SHARE,
    LEFT,
    ROUND,
    SHRINK_NOISE,
    SPENT,
    UNIT,
    commit_from,
    committed,
    end_cost_rounds,
    enough_for_index,
    hace_schedule,
    round_goal,
    warmup_w_min,
)
from risingbandits.seeding import policy_rng


def instances() -> list[rb.RisingInstance]:
    return [family_instance(f, j, 0, 2_000) for f in ("ltf-v1", "concave-v1") for j in range(4)]


def test_the_schedule_halves_only_while_the_budget_per_survivor_is_small() -> None:
    assert hace_schedule(8, 8 * 48, 48) == ([], [])  # T / K >= index_from: no round
    assert hace_schedule(8, 8 * 32, 48) == ([10, 31, 73], [4, 2, 1])  # Successive Halving's
    targets, keep = hace_schedule(8, 8 * 40, 48)
    assert (targets, keep) == ([13], [4])  # after one round 4 x 48 pulls are left per survivor
    assert 8 * 40 - 8 * 13 >= 48 * 4
    for k in range(2, 12):
        for horizon in (k, 3 * k, 20 * k, 47 * k):
            targets, keep = hace_schedule(k, horizon, 48)
            assert len(targets) <= math.ceil(math.log2(k))
            assert all(b == math.ceil(a / 2) for a, b in zip([k, *keep], keep, strict=False))
            assert targets == sorted(targets) and (not targets or targets[-1] <= horizon)


def test_the_rounds_are_planned_on_the_budget_less_the_reserve() -> None:
    """Successive Halving's schedule on floor((1 - reserve) T), cut by the budget left of T."""
    for k in (2, 5, 8):
        for per_arm in (4, 16, 40):
            horizon = k * per_arm
            plain = hace_schedule(k, horizon, 10**9)
            assert plain == halving_schedule(k, horizon, 2)
            reserved = hace_schedule(k, horizon, 10**9, 0.5)
            assert reserved == halving_schedule(k, max(k, horizon // 2), 2)
    assert hace_schedule(8, 8 * 40, 48, 0.5) == ([6], [4])  # cut on T: 4 x 68 pulls left
    assert hace_schedule(8, 8 * 48, 48, 0.5) == ([], [])  # T / K >= index_from: no round


def test_the_last_survivor_trains_on_the_reserve() -> None:
    """With every round run (clear_by = 0), the deployed candidate gets the rounds' share and
    the reserve: at least half the budget with reserve = 0.5, more than without it."""
    for inst in instances():
        horizon = 16 * inst.n_arms
        targets, _ = hace_schedule(inst.n_arms, horizon, 48, 0.5)
        kept = make_policy("hace-ucb", clear_by=0)
        run = rb.simulate(inst, kept, horizon, 3)
        plain = rb.simulate(inst, make_policy("hace-ucb", clear_by=0, reserve=0), horizon, 3)
        deployed = run.pulls[np.arange(3), run.recommended]
        assert (deployed >= horizon // 2 + targets[-1]).all()
        assert deployed.mean() > plain.pulls[np.arange(3), plain.recommended].mean()
    with pytest.raises(ValueError, match=r"reserve=0\.95"):
        make_policy("hace-ucb", reserve=0.95)


def test_under_a_budget_in_cost_the_reserve_applies_with_one_lane_only() -> None:
    """With more lanes the rounds stop at as many survivors as lanes, which train side by side:
    holding budget back there would only make the eliminations before it less informed."""
    state = make_policy("hace-ucb").init_state(8, 8 * 16)
    state.budget[UNIT] = 2.0
    state.budget[LANES] = 1.0
    one = [round_goal(state, r) for r in range(3)]
    state.budget[LANES] = 4.0
    more = [round_goal(state, r) for r in range(3)]
    assert one == [2.0 * t for t in halving_schedule(8, 8 * 8, 2)[0]]
    assert more == [2.0 * t for t in halving_schedule(8, 8 * 16, 2)[0]]


@pytest.mark.parametrize(("lanes", "kept"), [(1, 3), (2, 3), (4, 4)])
def test_under_a_budget_in_cost_a_round_keeps_at_least_as_many_survivors_as_lanes(
    lanes: int, kept: int
) -> None:
    """The first round of K = 5 keeps Successive Halving's ceil(5 / 2) = 3, or the lanes if there
    are more: a worker that halving frees below the lanes trains no survivor faster (a candidate
    trains on one worker at a time), so eliminating there only removes a candidate. The arms
    with the lowest statistic go; with as many lanes as survivors the rounds are over."""
    state = make_policy("hace-ucb").init_state(5, 5 * 16)
    state.budget[UNIT] = 1.0
    state.budget[LANES] = float(lanes)
    state.plan[LEFT] = 10.0  # each survivor short of index_from pulls: the rounds run
    state.plan[SPENT] = round_goal(state, 0)  # every survivor has just met the first goal
    state.values[:] = [0.5, 0.9, 0.1, 0.7, 0.3]
    end_cost_rounds(state)
    assert state.active.sum() == kept
    assert state.active.tolist() == [v >= sorted(state.values)[-kept] for v in state.values]
    assert (state.budget[ROUND] == state.full.shape[0]) == (lanes >= kept)  # the rounds ended


@pytest.mark.parametrize(
    ("left", "enough"),
    [
        ([48.0] * 4, True),  # equal costs: every survivor index_from pulls, as in pulls
        ([47.0] * 4, False),
        ([80.0, 60.0, 28.0, 24.0], True),  # 48 on average, the dearest half of it
        ([90.0, 60.0, 30.0, 23.0], False),  # one below half of index_from
        ([60.0, 50.0, 40.0, 30.0], False),  # each over half, 45 on average
        ([200.0, 100.0, 0.2, 24.0], True),  # a survivor whose next pull no longer fits
    ],
)
def test_under_a_budget_in_cost_the_index_takes_over_by_the_mean_share(
    left: list[float], enough: bool
) -> None:
    """The index takes over once the survivors can make index_from = 48 pulls of their share
    at their own costs on average, none fewer than LEAST_SHARE of it: one dear candidate no
    longer keeps a run in rounds that judge it on a few pulls of equal cost."""
    state = make_policy("hace-ucb").init_state(4, 4 * 64)
    state.budget[UNIT] = 1.0
    state.budget[LANES] = 1.0
    state.plan[LEFT] = [4 * x for x in left]  # one lane, four survivors: a quarter each
    assert LEAST_SHARE * state.index_from == 24.0
    assert enough_for_index(state) == enough
    state.budget[LANES] = 4.0  # as many lanes as survivors: halving frees no worker
    assert enough_for_index(state)


@pytest.mark.parametrize(
    ("lanes", "leader_free", "started"), [(1, True, 2), (2, True, 1), (2, False, 2)]
)
def test_under_a_deadline_the_round_leader_does_not_wait_for_the_round(
    lanes: int, leader_free: bool, started: int
) -> None:
    """In a halving round with several lanes the survivor with the best statistic among those
    with a finished pull (arm 1: 0.8 against arm 0's 0.2) is started whenever a worker may
    start it, before the survivors still short of the round's goal; with one lane, or with the
    leader busy, the round robin goes on (least cost spent first: arm 2)."""
    state = make_policy("hace-ucb").init_state(4, 4 * 4)
    rng = policy_rng(0)
    ones = np.ones(4, np.bool_)
    plan_one(state, ones, np.full(4, 4.0), np.zeros(4), 1.0, lanes)
    update_one(state, 0, 0.2, 1, rng)
    update_one(state, 1, 0.8, 2, rng)
    allowed = np.array([True, leader_free, True, True])
    plan_one(state, allowed, np.array([3.0, 3.0, 4.0, 4.0]), np.array([1.0, 1.0, 0, 0]), 1.0, lanes)
    assert state.budget[ROUND] == 0  # the first round (two pulls each) is not over
    assert select_one(state, 3, rng) == started


def test_under_a_budget_in_cost_the_commit_comes_with_one_lane_once_its_share_is_left() -> None:
    """In cost the commit starts once the finished pulls cost what the T - commit x T pulls
    before it stand for, with one lane only (more lanes train the survivors side by side)."""
    state = make_policy("hace-ucb", commit=0.5).init_state(4, 4 * 64)
    state.budget[UNIT] = 2.0
    state.budget[LANES] = 1.0
    state.plan[SPENT] = [100.0, 80.0, 40.0, 34.0]  # 254 = 2 x 127: before round 129
    assert not committed(state)
    state.plan[SPENT, 3] = 36.0  # 256 = 2 x 128
    assert committed(state)
    state.budget[LANES] = 4.0
    assert not committed(state)


@pytest.mark.parametrize(("third", "deployed"), [([0.1] * 4, 0), ([0.0, 0.3, 0.0, 0.3], 1)])
def test_under_a_budget_in_cost_very_noisy_rewards_deploy_the_highest_level(
    third: list[float], deployed: int
) -> None:
    """With a worker per candidate the deployed model is the best halving statistic (the last
    quarter: arm 0's 0.75 against arm 1's 0.7), unless the residuals' own noise estimate
    exceeds DEPLOY_NOISE: then the highest level, a longer mean (here the last half: arm 0's
    0.675 < 0.7). Only the third arm's rewards differ: flat (no residual) or a zigzag (residuals
    +-0.6 pooled with four zeros: sigma = 0.14)."""
    state = make_policy("hace-ucb").init_state(3, 3 * 4)
    ones = np.ones(3, np.bool_)
    plan_one(state, ones, np.full(3, 4.0), np.zeros(3), 1.0, 3)
    rewards = np.array([[0.3, 0.45, 0.6, 0.75], [0.7] * 4, third])
    rng = policy_rng(0)
    for t in range(1, 13):
        arm = (t - 1) % 3
        update_one(state, arm, float(rewards[arm, (t - 1) // 3]), t, rng)
    sigma = np.sqrt(np.mean(np.diff(rewards, 2, axis=1) ** 2) / 6.0)
    assert (sigma > DEPLOY_NOISE) == (deployed == 1)
    assert recommend_one(state, np.full(3, 4), rewards[:, -1].copy()) == deployed


@pytest.mark.parametrize(("zigzag", "deployed"), [(0.0, 1), (0.02, 1), (0.04, 0), (0.06, 0)])
def test_under_a_budget_in_cost_noisy_statistics_are_shrunk_by_their_own_noise(
    zigzag: float, deployed: int
) -> None:
    """Arm 1 (one pull, 0.505) against arm 0 (eight pulls zigzagging +-zigzag around 0.5) and
    arm 2 (eight at 0.48): below SHRINK_NOISE the best statistic is deployed (arm 1); above it
    each statistic is shrunk toward the mean by its own noise, sigma^2 over the rewards it
    averages, and arm 1's one reward no longer leads (the halving statistic below DEPLOY_NOISE,
    the level above it)."""
    state = make_policy("hace-ucb").init_state(3, 3 * 8)
    plan_one(state, np.ones(3, np.bool_), np.full(3, 8.0), np.zeros(3), 1.0, 3)
    rng = policy_rng(0)
    zig = [0.5 + (zigzag if k % 2 else -zigzag) for k in range(8)]
    for k in range(8):
        update_one(state, 0, zig[k], 2 * k + 1, rng)
        update_one(state, 2, 0.48, 2 * k + 2, rng)
    update_one(state, 1, 0.505, 17, rng)
    sigma = zigzag * np.sqrt(16 / 12)  # residuals +-4 zigzag for arm 0, 0 for arm 2, pooled
    assert (sigma > SHRINK_NOISE) == (deployed == 0)
    assert (sigma > DEPLOY_NOISE) == (zigzag == 0.06)
    last = np.array([zig[-1], 0.505, 0.48])
    assert recommend_one(state, np.array([8, 1, 8]), last) == deployed


def test_the_warm_up_takes_at_most_a_quarter_of_the_budget_per_candidate() -> None:
    got = [warmup_w_min(16, 0.25, 5, 5 * m) for m in (1, 8, 48, 64, 100, 128, 1_000)]
    assert got == [1, 1, 6, 8, 12, 16, 16]
    assert warmup_w_min(16, 0.5, 5, 5 * 64) == 16 and warmup_w_min(4, 0.25, 5, 5 * 64) == 4
    assert make_policy("hace-ucb").init_state(5, 5 * 64).w_min == 8


@pytest.mark.parametrize("horizon", [240, 320, 1_000])
def test_with_a_large_budget_per_candidate_it_is_ace_ucb_with_its_warm_up_scaled(
    horizon: int,
) -> None:
    """No halving round from T / K = 48 on: ACE-UCB's choices, arm for arm, with w_min =
    min(16, T / (8 K)) (ACE-UCB's own w_min = 16 from T / K = 128 on), until the commit that
    the scaled warm-up brings (T / K < 128); from T / K = 128 on its deployed arm too."""
    for inst in instances():
        assert horizon >= 48 * inst.n_arms
        w_min = min(16, horizon // (8 * inst.n_arms))
        hace = rb.simulate(inst, "hace-ucb", horizon, 3, record_arms=True)
        ace = rb.simulate(inst, make_policy("ace-ucb", w_min=w_min), horizon, 3, record_arms=True)
        start = commit_from(horizon, 0.25, w_min, 16) - 1
        assert hace.arms is not None and ace.arms is not None
        np.testing.assert_array_equal(hace.arms[:, :start], ace.arms[:, :start])
        assert (start == horizon) == (w_min == 16)
        if w_min == 16:
            np.testing.assert_array_equal(hace.recommended, ace.recommended)
        else:  # the warm-up changes the choices
            frozen = rb.simulate(inst, "ace-ucb", horizon, 3, record_arms=True)
            assert not np.array_equal(hace.arms, frozen.arms)


def test_the_commit_trains_the_deployed_model_while_the_warm_up_is_scaled() -> None:
    """With T / K < 128 (ACE-UCB's warm-up scaled) the last commit x T pulls go to the survivor
    that would be deployed at each step (the highest level); from T / K = 128 on, or with
    commit = 0, there is none."""
    assert commit_from(320, 0.5, 8, 16) == 161 and commit_from(320, 0.25, 8, 16) == 241
    assert commit_from(640, 0.5, 16, 16) == 641 and commit_from(320, 0.0, 8, 16) == 321
    assert make_policy("hace-ucb").init_state(5, 5 * 64).commit_from == 241
    assert make_policy("hace-ucb", commit=0.5).init_state(5, 5 * 64).commit_from == 161
    assert make_policy("hace-ucb").init_state(5, 5 * 128).commit_from == 641
    curves = np.vstack([c * np.sqrt(np.arange(1, 321)) / 18 for c in (0.5, 0.6, 0.55, 0.58)])
    horizon = 4 * 64
    start = horizon - horizon // 4 + 1
    for commit, seed in itertools.product((0.0, 0.25), range(3)):
        rng = np.random.default_rng(seed)  # Bernoulli rewards: ACE-UCB explores to the end
        sel = ModelSelector(4, horizon, seed=seed, params={"commit": commit})
        other = 0
        for t in range(1, horizon + 1):
            before = sel.recommend()
            arm = sel.select()
            other += t >= start and arm != before
            sel.update(arm, float(rng.random() < curves[arm, sel.pulls[arm]]))
        assert (other == 0) == (commit > 0)
        if commit > 0:
            assert sel.pulls[sel.recommend()] >= horizon // 4


def test_in_the_commit_a_busy_candidate_makes_way_for_the_next_level() -> None:
    """The commit shows the levels as its index, so a selector whose committed candidate is not
    available starts the one with the next level (not the lowest index)."""
    rng = np.random.default_rng(0)
    horizon = 4 * 64
    sel = ModelSelector(4, horizon, seed=0)
    for _ in range(horizon - horizon // 4 + 5):  # into the commit
        arm = sel.select()
        sel.update(arm, float(np.clip((0.2, 0.5, 0.7, 0.9)[arm] + rng.normal(0, 0.02), 0, 1)))
    assert sel.recommend() == 3 and sel.select() == 3
    assert sel.select(available=[0, 1, 2]) == 2


def test_in_a_halving_round_busy_survivors_make_way_for_a_survivor() -> None:
    """A halving round shows its queue (minus the pulls of the survivors) as its index, so a
    selector whose forced survivors are busy past its redirects starts another survivor, not an
    eliminated candidate (with +inf / -inf only it fell back on candidate 0)."""
    rng = np.random.default_rng(0)
    means = np.linspace(0.2, 0.9, 16)
    sel = ModelSelector(16, 16 * 8, seed=0, params={"clear_by": 0})
    for _ in range(17):  # round 1 (one pull each) ends: 8..15 survive, one pull each
        arm = sel.select()
        sel.update(arm, float(np.clip(means[arm] + rng.normal(0, 0.02), 0, 1)))
    assert sel.select(available=[0, 15]) == 15


@pytest.mark.parametrize("per_arm", [4, 16, 30])
def test_with_a_small_budget_per_candidate_it_is_successive_halving(per_arm: int) -> None:
    """Every halving round runs (the budget left per survivor stays below 48) and, without the
    hand-over (clear_by = 0) and the reserve, the choices and the deployed arm are Successive
    Halving's (eta = 2, the last quarter as statistic)."""
    for inst in instances():
        horizon = per_arm * inst.n_arms
        assert len(hace_schedule(inst.n_arms, horizon, 48)[0]) == math.ceil(math.log2(inst.n_arms))
        halving = make_policy("hace-ucb", clear_by=0, reserve=0)
        hace = rb.simulate(inst, halving, horizon, 3, record_arms=True)
        sh = rb.simulate(inst, "successive-halving", horizon, 3, record_arms=True)
        np.testing.assert_array_equal(hace.arms, sh.arms)
        np.testing.assert_array_equal(hace.recommended, sh.recommended)


def test_the_rounds_hand_over_to_the_index_once_the_leader_is_clear() -> None:
    """Two arms far above the rest: after the first sweeps with residuals enough for the noise
    bound the leader (arm 0) leads by more than 2 sigma_up sqrt(2 / q), the rounds stop and
    ACE-UCB's index gives it the budget; with clear_by = 0 the rounds run to their end (the
    same sweeps first, then halving: every arm in round 1)."""
    n = np.arange(1, 201)
    caps = (0.9, 0.5, 0.3, 0.2)
    table = np.vstack([np.minimum(1, c * (1 - 0.5 / np.sqrt(n))) for c in caps])
    inst = rb.from_means(table, rb.Noise("gaussian", 0.02), require_rising=False)
    horizon = 4 * 16  # every round of halving runs: 8, then 16 for 2, then the rest
    assert hace_schedule(4, horizon, 48) == ([8, 24], [2, 1])
    clear = rb.simulate(inst, make_policy("hace-ucb", reserve=0), horizon, 5, record_arms=True)
    rounds = make_policy("hace-ucb", clear_by=0, reserve=0)
    rounds = rb.simulate(inst, rounds, horizon, 5, record_arms=True)
    assert clear.arms is not None and rounds.arms is not None
    assert (clear.recommended == 0).all() and (rounds.recommended == 0).all()
    for early, full in zip(clear.arms, rounds.arms, strict=True):
        assert (early[:12] == full[:12]).all()  # three sweeps: the first residuals
        first = np.bincount(early[:32], minlength=4)
        assert first[0] > 8 and first[2:].min() < 8  # no round of 8 each: handed over
        assert np.bincount(full[:32], minlength=4).tolist() == [8, 8, 8, 8]
    assert clear.pulls[:, 0].mean() > rounds.pulls[:, 0].mean()
    with pytest.raises(ValueError, match="clear_by=-1"):
        make_policy("hace-ucb", clear_by=-1)


def test_between_the_regimes_ace_ucb_plays_only_the_survivors() -> None:
    n = np.arange(1, 401)
    caps = (0.2, 0.5, 0.9, 0.3, 0.7, 0.4, 0.6, 0.8)
    table = np.vstack([np.minimum(1, c * np.sqrt(n) / 20) for c in caps])
    inst = rb.from_means(table, rb.Noise("gaussian", 0.05), require_rising=False)
    horizon = 8 * 40  # one round of (T / 2) // (8 x 3) = 6 pulls each, then 4 x 68 left
    assert hace_schedule(8, horizon, 48, 0.5) == ([6], [4])
    run = rb.simulate(inst, "hace-ucb", horizon, 5, record_arms=True)
    assert run.arms is not None
    for arms, pulls, rec in zip(run.arms, run.pulls, run.recommended, strict=True):
        assert np.bincount(arms[: 8 * 6], minlength=8).tolist() == [6] * 8  # the round
        later = set(arms[8 * 6 :].tolist())
        assert len(later) <= 4 and rec in later  # the four survivors, one of them deployed
        assert pulls.sum() == horizon


def test_the_selector_and_its_integrations_default_to_it() -> None:
    assert DEFAULT_POLICY == "hace-ucb"
    sel = ModelSelector(["a", "b", "c"], budget=30, seed=0)
    assert sel.policy["policy"] == "hace-ucb" and sel.policy["params"]["sigma"] == "estimate"
    policy = make_policy("hace-ucb")
    assert policy.uses_horizon and policy.params["index_from"] == 48
    assert policy.params["warmup_share"] == 0.25 and policy.params["clear_by"] == 2.0
    with pytest.raises(ValueError, match="index_from=0 is not allowed"):
        make_policy("hace-ucb", index_from=0)
    with pytest.raises(ValueError, match="warmup_share=0"):
        make_policy("hace-ucb", warmup_share=0)


def test_a_new_budget_replans_the_rounds_in_cost_too() -> None:
    """A changed budget re-derives both schedules (the rounds in pulls and Successive Halving's
    whole schedule, which the rounds in cost follow) for the new K and T; the carried state is
    the old run's (its pulls)."""
    policy = make_policy("hace-ucb")
    old = policy.init_state(8, 8 * 20)
    old.hist.counts[:] = 3
    moved = transplant(policy.init_state(8, 8 * 40), old, 8, list(range(8)))
    fresh = policy.init_state(8, 8 * 40)
    assert old.full[0, 0] == 6 and fresh.full[0, 0] == 13
    np.testing.assert_array_equal(moved.full, fresh.full)
    np.testing.assert_array_equal(moved.targets, fresh.targets)
    assert moved.hist.counts.tolist() == [3] * 8
