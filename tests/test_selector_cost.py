"""Issue 22, item 4: a model selector with a budget in cost (seconds measured, or costs given)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from risingbandits.modelselect import DEFAULT_POLICY, ModelSelector, costs
from risingbandits.modelselect.selector import WAIT
from risingbandits.policies.rising.hace import ALLOWED, LEFT, PLANNED
from test_modelselect_selector import BUDGET, K, drive, score_table

COSTS = [1.0, 7.5, 3.0, 2.0]  # per step of each candidate: very different


class Clock:
    """A monotonic clock the test moves by hand (no sleeping)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(costs, "monotonic", fake)
    return fake


def start(selector: ModelSelector) -> int | None:
    """A select, or None when the policy waits for a result."""
    try:
        return selector.select()
    except RuntimeError as exc:
        assert str(exc) == WAIT
        return None


def drive_parallel(
    selector: ModelSelector, scores: np.ndarray, steps: int, arms: list[int], workers: int = 2
) -> None:
    """Up to ``workers`` steps in flight, the oldest reported first with its given cost."""
    for _ in range(steps):
        while len(selector.in_flight) < workers and selector.remaining > 0:
            arm = start(selector)
            if arm is None:
                break
            arms.append(arm)
        if not selector.in_flight:
            return
        arm = selector.in_flight[0]
        selector.update(arm, float(scores[arm, selector.pulls[arm]]), cost=COSTS[arm])


def one_line(error: pytest.ExceptionInfo[BaseException]) -> None:
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("policy", [DEFAULT_POLICY, "cure-ucb", "successive-halving"])
def test_unit_given_costs_make_the_choices_of_a_budget_of_steps(policy: str) -> None:
    scores = score_table()
    steps: list[int] = []
    drive(ModelSelector(K, BUDGET, policy, seed=5), scores, BUDGET, steps)
    given: list[int] = []
    sel = ModelSelector(K, float(BUDGET), policy, seed=5, cost="given")
    while not sel.done:
        arm = sel.select()
        sel.update(arm, float(scores[arm, sel.pulls[arm]]), cost=1.0)
        given.append(arm)
    assert given == steps
    assert sel.spent == BUDGET and sel.horizon == BUDGET


def test_given_costs_end_the_run_exactly_when_spent() -> None:
    scores, budget = score_table(), 100.0
    sel = ModelSelector(K, budget, cost="given", seed=1)
    paid = []
    while not sel.done:
        assert sel.spent < budget and sel.remaining == budget - sel.spent
        arm = sel.select()
        sel.update(arm, float(scores[arm, sel.pulls[arm]]), cost=COSTS[arm])
        paid.append(COSTS[arm])
        assert sel.spent == sum(paid)
    assert sum(paid[:-1]) < budget <= sum(paid)  # the last step may overrun
    assert sel.done and sel.remaining == 0
    with pytest.raises(RuntimeError, match=r"budget of 100 cost units is used up \(1\d\d.*spent"):
        sel.select()
    summary = sel.summary()
    assert (summary["cost"], summary["budget"], summary["spent"]) == ("given", budget, sum(paid))
    assert f"cost='given', budget=100, spent={sum(paid):g}" in repr(sel)


def test_the_horizon_is_the_steps_the_budget_buys() -> None:
    sel = ModelSelector(2, 1000.0, "cure-ucb", cost="given")
    assert sel.horizon == 1000  # before any cost: a step taken to cost one unit
    for _ in range(2):
        sel.update(sel.select(), 0.5, cost=10.0)
    sel.select()
    assert sel.horizon == 2 + (1000 - 20) // 10  # then: the steps left at the mean cost


def test_the_default_plans_in_cost_online() -> None:
    sel = ModelSelector(["cheap", "dear"], 400.0, cost="given", seed=0)
    for _ in range(4):
        arm = sel.select()
        sel.update(arm, 0.5 + 0.01 * sel.pulls[arm], cost=[1.0, 10.0][arm])
    busy = sel.select()
    sel.select()  # planned with ``busy`` in flight
    state = sel._run.state
    assert state.budget[PLANNED] == 1.0
    committed = [1.0, 10.0][busy]
    expected = (400.0 - sel.spent - committed) / np.array([1, 10])
    np.testing.assert_allclose(state.plan[LEFT], expected)
    assert state.plan[ALLOWED].tolist() == [float(i != busy) for i in range(2)]


def test_the_default_waits_for_a_result_unless_a_worker_must_be_filled() -> None:
    sel = ModelSelector(4, 32.0, cost="given", seed=0)  # rounds of 2 steps each (on half of 32)
    first = [sel.select() for _ in range(4)]
    for _ in range(2):
        sel.update(first[0], 0.5, cost=1.0)
        if sel.pulls[first[0]] < 2:
            assert sel.select() == first[0]
    with pytest.raises(RuntimeError, match="report a result with update") as error:
        sel.select()  # its round is done, every other candidate is training
    one_line(error)
    assert sel.select(available=[first[0]]) == first[0]


def test_a_candidate_trains_one_step_at_a_time() -> None:
    sel = ModelSelector(["a", "b"], 10.0, cost="given", max_pending=3)
    assert {sel.select(), sel.select()} == {0, 1}
    for available in (None, ["a"]):
        with pytest.raises(RuntimeError, match="every candidate offered has a step in fl") as e:
            sel.select(available=available)
        one_line(e)


def test_seconds_are_measured_from_select_to_update(clock: Clock, tmp_path: Path) -> None:
    sel = ModelSelector(2, 12.0, "cure-ucb", cost="seconds")
    a = sel.select()
    clock.now += 2.5
    b = sel.select()
    clock.now += 1.0
    sel.update(a, 0.5)
    clock.now += 4.0
    sel.update(b, 0.5)
    assert sel.spent == 3.5 + 5.0
    a = sel.select()
    clock.now += 1.0
    sel.cancel(a)  # its time is spent all the same
    assert sel.spent == 9.5 and sel.pulls == [1, 1]
    a = sel.select()
    clock.now += 2.0
    sel.save(tmp_path / "sel.json")
    clock.now += 100.0  # down between the save and the restore: not charged
    again = ModelSelector.load(tmp_path / "sel.json")
    clock.now += 1.0
    again.update(a, 0.5)
    assert again.spent == 12.5 and again.done and again.cost == "seconds"


def test_a_checkpoint_continues_exactly(tmp_path: Path) -> None:
    scores = score_table()
    straight: list[int] = []
    whole = ModelSelector(K, 300.0, cost="given", seed=2)
    drive_parallel(whole, scores, 400, straight)
    resumed: list[int] = []
    first = ModelSelector(K, 300.0, cost="given", seed=2)
    drive_parallel(first, scores, 30, resumed)
    assert first.in_flight  # saved with a step in flight
    first.save(tmp_path / "sel.json")
    again = ModelSelector.load(tmp_path / "sel.json")
    assert again.in_flight == first.in_flight and again.spent == first.spent
    drive_parallel(again, scores, 400, resumed)
    assert resumed == straight and again.done
    assert again.summary() == whole.summary() and again.horizon == whole.horizon


def test_candidates_change_under_a_budget_in_cost(tmp_path: Path) -> None:
    scores = np.vstack([score_table(), score_table(5)[:1]])
    sel = ModelSelector(["a", "b", "c"], 200.0, cost="given", seed=3)
    drive_parallel(sel, scores, 10, [])
    new = sel.add_candidate("d")
    assert sel.select() == new
    assert sel.select() != new  # its second forced step waits for the first to report
    drive_parallel(sel, scores, 6, [])
    spent = sel.spent
    retired = next(i for i in range(3) if i not in sel.in_flight)
    sel.retire(retired)
    assert sel.spent == spent and sel.names[retired] not in sel.active
    assert sel.pulls[new] >= 1
    back = ModelSelector.from_state_dict(json.loads(json.dumps(sel.state_dict())))
    assert back.summary() == sel.summary()


def bad_update(sel: ModelSelector, arm: int, **kwargs: Any) -> str:
    before = (sel.t, sel.in_flight, sel.spent, sel.history)
    with pytest.raises(ValueError) as error:
        sel.update(arm, 0.5, **kwargs)
    one_line(error)
    assert (sel.t, sel.in_flight, sel.spent, sel.history) == before
    return str(error.value)


@pytest.mark.parametrize("cost", [0, -1.0, float("nan"), float("inf"), "1", True, [1.0]])
def test_a_bad_given_cost_is_refused_in_one_line(cost: Any) -> None:
    sel = ModelSelector(["a", "b"], 10.0, cost="given")
    arm = sel.select()
    assert f"update('a'): cost={cost!r} is not allowed: use the step's cost" in bad_update(
        sel, arm, cost=cost
    )


def test_a_cost_too_large_for_a_float_is_refused_in_one_line() -> None:
    """10**400 gave an OverflowError (int too large to convert to float)."""
    sel = ModelSelector(["a", "b"], 10.0, cost="given")
    message = bad_update(sel, sel.select(), cost=10**400)
    assert message.startswith("update('a'): cost=1000") and "use the step's cost" in message


def test_costs_that_would_sum_past_the_largest_float_are_refused() -> None:
    """Three costs of 1e308 each passed, then ``done``, ``spent`` and ``summary()`` raised an
    OverflowError (math.fsum) for good."""
    sel = ModelSelector(3, 1.7e308, cost="given")
    arms = [sel.select() for _ in range(3)]
    sel.update(arms[0], 0.5, cost=1e308)
    message = bad_update(sel, arms[1], cost=1e308)
    assert "cost=1e+308 is not allowed: use a cost that keeps the total spent a finite" in message
    with pytest.raises(ValueError, match=r"cancel\('candidate2'\): cost=1e\+308 .* finite"):
        sel.cancel(arms[2], cost=1e308)
    sel.update(arms[1], 0.5, cost=5e307)
    assert sel.spent == 1.5e308 and not sel.done and sel.summary()["spent"] == 1.5e308


def test_cost_is_required_given_and_refused_otherwise(clock: Clock) -> None:
    given = ModelSelector(["a", "b"], 10.0, cost="given")
    assert "cost= is missing" in bad_update(given, given.select())
    with pytest.raises(ValueError, match=r"cancel\('a'\): cost=-1 is not allowed"):
        given.cancel(0, cost=-1)
    given.cancel(0, cost=2.0)
    assert given.spent == 2.0
    steps = ModelSelector(["a", "b"], 10)
    assert "budget counts training steps" in bad_update(steps, steps.select(), cost=1.0)
    with pytest.raises(ValueError, match="budget counts training steps"):
        steps.cancel(0, cost=1.0)
    seconds = ModelSelector(["a", "b"], 10.0, cost="seconds")
    assert "measures seconds itself" in bad_update(seconds, seconds.select(), cost=1.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cost": "hours"}, "cost='hours' is not allowed: use 'pulls'"),
        ({"cost": "given", "budget": 0}, "budget=0 is not allowed: use a finite number > 0"),
        ({"cost": "given", "budget": float("inf")}, "budget=inf is not allowed"),
        ({"cost": "seconds", "budget": float("nan")}, "budget=nan is not allowed"),
        ({"cost": "seconds", "budget": "60"}, "budget='60' is not allowed"),
        ({"cost": "given", "budget": True}, "budget=True is not allowed"),
        ({"cost": "given", "budget": 10**400}, r"budget=1000.*\.\.\. is not allowed: use a finite"),
        ({"cost": "seconds", "budget": 10**400}, r"budget=1000.*\.\.\. is not allowed: use a"),
        ({"budget": 10.5}, "budget=10.5 is not allowed: use an integer"),
    ],
)
def test_bad_settings_are_refused_in_one_line(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        ModelSelector(3, **{"budget": 10.0, **kwargs})
    one_line(error)


def test_set_budget_in_cost() -> None:
    sel = ModelSelector(["a", "b"], 10.0, cost="given")
    sel.update(sel.select(), 0.5, cost=4.0)
    with pytest.raises(ValueError, match=r"budget=3 is not allowed: .* at least 4 \(spent: 4\)"):
        sel.set_budget(3)
    sel.set_budget(4)
    assert sel.done and sel.remaining == 0
    sel.set_budget(100.0)
    assert not sel.done and sel.remaining == 96.0


def saved(tmp_path: Path, cost: str) -> dict:
    """A checkpoint under ``cost`` after a few steps, with two steps in flight."""
    sel = ModelSelector(["a", "b", "c"], 50 if cost == "pulls" else 50.0, "cure-ucb", cost=cost)
    for _ in range(3):
        sel.update(sel.select(), 0.4, **({"cost": 2.0} if cost == "given" else {}))
    sel.select()
    sel.select()
    return json.loads(json.dumps(sel.state_dict()))


def put(field: str, value: Any) -> Callable[[dict], None]:
    def edit(data: dict) -> None:
        *path, last = field.split(".")
        target = data
        for key in path:
            target = target[key]
        target[last] = value

    return edit


@pytest.mark.parametrize(
    ("cost", "edit", "message"),
    [
        ("given", put("cost", "hours"), r"checkpoint cost='hours' is not allowed: use one of"),
        ("given", put("cost", None), r"checkpoint cost=None is not allowed"),
        ("given", put("budget", -1), r"checkpoint budget=-1 is not allowed: use a finite"),
        ("given", put("budget", "inf"), r"checkpoint budget='inf' is not allowed"),
        ("given", put("cost", "pulls"), r"checkpoint budget=50.0 is not allowed: use an integer"),
        ("given", put("costs", None), r"checkpoint costs=None is not allowed: use \{sums"),
        ("given", put("costs.sums", [2.0, 2.0]), r"checkpoint costs.sums=.* use 3 finite"),
        ("given", put("costs.sums", [2.0, -2.0, 2.0]), r"costs.sums=.* numbers >= 0"),
        ("given", put("costs.sums", [2.0, 2.0, None]), r"costs.sums=.* numbers >= 0"),
        ("given", put("costs.sums", [2.0, 2.0, 0.0]), r"costs.sums=.* > 0 for one trained"),
        ("given", put("costs.lost", -1.0), r"checkpoint costs.lost=-1.0 is not allowed"),
        ("given", put("costs.sums", [1e308] * 3), r"costs.sums=.* total with costs.lost must"),
        ("given", put("costs.lost", 10**400), r"costs.lost=1000.*\.\.\. is not allowed"),
        ("given", put("costs.running", [1.0, 1.0]), r"costs.running=.* use null"),
        ("given", put("in_flight", [0, 0]), r"in_flight=\[0, 0\] .* each once"),
        ("seconds", put("costs.running", [1.0]), r"costs.running=\[1.0\] .* use 2 finite"),
        ("seconds", put("costs.running", [1.0, -1.0]), r"costs.running=.* numbers >= 0"),
        ("seconds", put("costs.sums", [1.0, 1.0, 1.0, 1.0]), r"costs.sums=.* use 3 finite"),
        ("pulls", put("costs", {"sums": [], "lost": 0, "running": None}), r"costs=.* use null"),
    ],
)
def test_a_checkpoint_with_bad_cost_fields_is_refused(
    tmp_path: Path, cost: str, edit: Callable[[dict], None], message: str
) -> None:
    data = saved(tmp_path, cost)
    edit(data)
    with pytest.raises(ValueError, match=message) as error:
        ModelSelector.from_state_dict(data)
    one_line(error)


def test_a_version_3_checkpoint_is_read_as_a_budget_of_steps() -> None:
    scores = score_table()
    straight: list[int] = []
    drive(ModelSelector(K, BUDGET, seed=4), scores, BUDGET, straight)
    first = ModelSelector(K, BUDGET, seed=4)
    resumed: list[int] = []
    drive(first, scores, 40, resumed)
    data = first.state_dict() | {"format": "risingbandits.modelselect/3"}
    del data["cost"], data["costs"]
    again = ModelSelector.from_state_dict(data)
    assert again.cost == "pulls" and again.state_dict()["format"].endswith("/4")
    drive(again, scores, BUDGET - 40, resumed)
    assert resumed == straight


def _overrun(tmp_path: Path, max_pending: int) -> tuple[Path, dict[str, Any]]:
    """A run of budget 100 in given costs overrun by its last steps (cost 100 each, started
    while 6 was spent), saved: a state the API reaches."""
    sel = ModelSelector(["a", "b", "c"], 100.0, cost="given", seed=1, max_pending=max_pending)
    for _ in range(6):
        arm = sel.select()
        sel.update(arm, 0.5, cost=1.0)
    started = [sel.select(available=[name]) for name in ("a", "b")[:max_pending]]
    for arm in started:
        sel.update(arm, 0.5, cost=100.0)
    assert sel.done and sel.spent > sel.budget
    path = tmp_path / "sel.json"
    sel.save(path)
    assert ModelSelector.load(path).spent == sel.spent  # an overrun budget loads
    return path, json.loads(path.read_text())


@pytest.mark.parametrize("max_pending", [1, 2])
def test_a_checkpoint_budget_below_the_cost_spent_before_the_overrun_is_refused(
    tmp_path: Path, max_pending: int
) -> None:
    """Only the steps in flight when the budget was reached (at most max_pending, one per
    candidate) report past it; a budget below what the other candidates spent loaded."""
    path, data = _overrun(tmp_path, max_pending)
    before = sum(s for i, s in enumerate(data["costs"]["sums"]) if i >= max_pending)
    for budget, loads in ((before, True), (before / 2, False)):
        data["budget"] = budget
        path.write_text(json.dumps(data))
        if loads:
            assert ModelSelector.load(path).budget == budget
            continue
        with pytest.raises(ValueError, match=rf"^checkpoint budget={budget!r} is not allowed: use"):
            ModelSelector.load(path)
