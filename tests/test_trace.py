"""Traces over every registered policy: the traced terms add up to the traced index, the choice
follows from the trace by the rule of the policy's ``trace_kind``, tracing changes no choice
(compiled and online), and ``trace_every`` and the memory limit behave."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

import risingbandits as rb
from conftest import random_ltf
from risingbandits.policies import POLICIES, make_policy
from risingbandits.policies.machinery.trace import TRACE_KINDS, Trace
from risingbandits.seeding import reward_key

NAMES = sorted(POLICIES)
NOISES = [rb.Noise("gaussian", 0.1), rb.Noise("bernoulli"), rb.Noise("none")]


def configs(name: str) -> list[rb.Policy]:
    """The policy with its defaults and with each preset (different code paths: windows,
    forced phases, schedules)."""
    cls = POLICIES[name]
    return [make_policy(name)] + [make_policy(name, preset=p) for p in cls.presets]


def traced(policy: rb.Policy, noise: rb.Noise, seeds: Any = (0, 3)) -> rb.SimulationResult:
    instance = random_ltf(np.random.default_rng(11), 4, 700, noise)
    return rb.simulate(instance, policy, 700, list(seeds), trace=True, record_arms=True)


def summed(terms: np.ndarray) -> np.ndarray:
    """The terms added left to right, as a kernel writes ``a + b + c``."""
    total = terms[..., 0].copy()
    for j in range(1, terms.shape[-1]):
        total = total + terms[..., j]
    return total


@pytest.mark.parametrize("name", NAMES)
def test_every_policy_declares_its_trace(name: str) -> None:
    cls = POLICIES[name]
    assert cls.trace_terms, f"{name}: set trace_terms (the names of its index terms)"
    assert cls.trace_kind in TRACE_KINDS, f"{name}: trace_kind must be one of {list(TRACE_KINDS)}"
    state = make_policy(name).init_state(5, 100, 0.1)
    assert state.scores.shape == (5,)
    assert state.terms.shape == (5, len(cls.trace_terms))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("noise", NOISES, ids=str)
def test_terms_add_up_to_the_traced_index(name: str, noise: rb.Noise) -> None:
    for policy in configs(name):
        trace = traced(policy, noise).trace
        assert trace is not None
        assert trace.term_names == POLICIES[name].trace_terms
        assert not np.isnan(trace.index).any()
        # Exactly equal: the kernel ranks the arms by the sum of the terms it records.
        np.testing.assert_array_equal(summed(trace.terms), trace.index, err_msg=repr(policy))


def check_choice(kind: str, trace: Trace, label: str) -> None:
    """The rule of ``kind`` (TRACE_KINDS) at every recorded round of every seed."""
    played = np.take_along_axis(trace.index, trace.arms[..., None].astype(np.int64), -1)[..., 0]
    if kind in ("index", "sample"):
        top = trace.index.max(axis=-1)
        bad = np.argwhere(played != top)
        assert bad.size == 0, f"{label}: not the argmax at (seed, recorded round) {bad[0]}"
    elif kind == "probability":
        assert (trace.index >= 0).all()
        np.testing.assert_allclose(trace.index.sum(axis=-1), 1.0, rtol=1e-12)
        assert (played > 0).all(), f"{label}: an arm of probability 0 was played"
    else:
        assert kind == "elimination"
        status = np.take_along_axis(trace.terms[..., -1], trace.arms[..., None], -1)[..., 0]
        assert (status == 0.0).all(), f"{label}: an eliminated arm was played"
        assert np.isin(trace.terms[..., -1], (0.0, -np.inf)).all()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("noise", NOISES, ids=str)
def test_the_choice_follows_from_the_trace(name: str, noise: rb.Noise) -> None:
    kind = POLICIES[name].trace_kind
    for policy in configs(name):
        res = traced(policy, noise)
        assert res.trace is not None and res.arms is not None
        np.testing.assert_array_equal(res.trace.arms, res.arms)
        check_choice(kind, res.trace, repr(policy))


def test_forced_rounds_show_plus_inf_for_the_arm_played() -> None:
    res = traced(make_policy("cure-ucb"), rb.Noise("gaussian", 0.1), seeds=[0])
    assert res.trace is not None
    first = res.trace.index[0, :8]  # CURE-UCB's 2K = 8 round-robin rounds
    assert (first[np.arange(8), np.arange(8) % 4] == np.inf).all()
    assert np.isneginf(first).sum() == 8 * 3
    assert np.isfinite(res.trace.index[0, 8]).all()


def online_run(
    policy: rb.Policy, instance: rb.RisingInstance, horizon: int, seed: int, trace: bool
) -> list[int]:
    key = reward_key(seed)
    policy.reset(instance.n_arms, horizon, seed, instance.noise_proxy, trace=trace)
    pulls = np.zeros(instance.n_arms, np.int64)
    arms = []
    for _ in range(horizon):
        arm = policy.select()
        pulls[arm] += 1
        policy.update(arm, instance.reward(key, arm, int(pulls[arm])))
        arms.append(arm)
    return arms


@pytest.mark.parametrize("name", NAMES)
def test_tracing_changes_no_choice(name: str) -> None:
    instance = random_ltf(np.random.default_rng(5), 3, 400, rb.Noise("gaussian", 0.1))
    for policy in configs(name):
        off = rb.simulate(instance, policy, 400, [1, 2], record_arms=True)
        on = rb.simulate(instance, policy, 400, [1, 2], record_arms=True, trace=True)
        assert off.arms is not None and on.arms is not None and on.trace is not None
        np.testing.assert_array_equal(on.arms, off.arms)
        np.testing.assert_array_equal(on.reward, off.reward)
        np.testing.assert_array_equal(on.recommended, off.recommended)
        online_off = online_run(policy, instance, 400, 2, trace=False)
        online_on = online_run(policy, instance, 400, 2, trace=True)
        assert online_on == online_off == off.arms[1].tolist()
        # The online trace holds exactly the compiled simulator's numbers.
        online = policy.trace()
        np.testing.assert_array_equal(online.rounds, on.trace.rounds)
        np.testing.assert_array_equal(online.index[0], on.trace.index[1])
        np.testing.assert_array_equal(online.terms[0], on.trace.terms[1])
        np.testing.assert_array_equal(online.arms[0], on.trace.arms[1])


def test_trace_every_records_every_kth_round() -> None:
    instance = random_ltf(np.random.default_rng(3), 3, 500, rb.Noise("gaussian", 0.1))
    policy = make_policy("red-ucb")
    full = rb.simulate(instance, policy, 500, 2, trace=True).trace
    sparse = rb.simulate(instance, policy, 500, 2, trace=True, trace_every=7).trace
    assert full is not None and sparse is not None
    np.testing.assert_array_equal(sparse.rounds, np.arange(1, 501, 7))
    rows = sparse.rounds - 1
    assert sparse.index.shape == (2, len(rows), 3)
    assert sparse.terms.shape == (2, len(rows), 3, 2)
    np.testing.assert_array_equal(sparse.index, full.index[:, rows])
    np.testing.assert_array_equal(sparse.terms, full.terms[:, rows])
    np.testing.assert_array_equal(sparse.arms, full.arms[:, rows])


@pytest.mark.parametrize("every", [0, -3, 1.5, True, "2"])
def test_trace_every_must_be_a_positive_integer(every: Any) -> None:
    with pytest.raises(ValueError, match=r"^trace_every=.* is not allowed: use an integer >= 1$"):
        rb.simulate(rb.intro(100), make_policy("ucb1"), 100, 1, trace=True, trace_every=every)


def test_trace_above_the_limit_is_refused_with_the_trace_every_that_fits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    instance, policy = rb.intro(1_000), make_policy("cure-ucb")
    # 3 seeds x 1,000 rounds x 2 arms x (1 + 3 terms) = 24,000 numbers.
    simulate_module = importlib.import_module("risingbandits.simulate")  # not the function
    monkeypatch.setattr(simulate_module, "TRACE_LIMIT", 5_000)
    with pytest.raises(ValueError) as err:
        rb.simulate(instance, policy, 1_000, 3, trace=True)
    message = str(err.value)
    assert "\n" not in message
    assert "trace of 24,000 numbers" in message and "limit is 5,000" in message
    need = int(message.rsplit("trace_every >= ", 1)[1].split()[0])
    res = rb.simulate(instance, policy, 1_000, 3, trace=True, trace_every=need)
    assert res.trace is not None and res.trace.index.size * 4 <= 5_000
    with pytest.raises(ValueError, match="limit"):
        rb.simulate(instance, policy, 1_000, 3, trace=True, trace_every=need - 1)
    # Without a trace nothing is counted against the limit.
    rb.simulate(instance, policy, 1_000, 3)


def test_online_trace_needs_reset_with_trace() -> None:
    policy = make_policy("cure-ucb").reset(2, 10, 0)
    policy.select()
    with pytest.raises(ValueError, match=r"reset\(\.\.\., trace=True\)"):
        policy.trace()
