"""A model selector whose budget and candidates change during the run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from risingbandits.modelselect import ModelSelector
from risingbandits.modelselect.candidates import NEW_CANDIDATE_PULLS
from risingbandits.policies import POLICIES


def score(arm: int, n: int) -> float:
    """A rising score: candidate ``arm``'s n-th step (arms ranked differently early and late)."""
    return min(1.0, (0.3 + 0.1 * (arm % 3)) * (1 - np.exp(-n / (20 + 30 * (arm % 4)))) + 0.2)


def drive(sel: ModelSelector, steps: int) -> list[int]:
    chosen = []
    for _ in range(steps):
        arm = sel.select()
        sel.update(arm, score(arm, int(sel.pulls[arm]) + 1))
        chosen.append(arm)
    return chosen


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_budget_set_before_the_start_is_the_budget(name: str) -> None:
    """set_budget re-derives every parameter from the new T: before any step, the run is the
    one a selector created with that budget makes."""
    moved = ModelSelector(4, 60, name, seed=2)
    moved.set_budget(140)
    assert drive(moved, 140) == drive(ModelSelector(4, 140, name, seed=2), 140)
    assert moved.done and moved.budget == 140


def test_budget_grows_and_shrinks_mid_run() -> None:
    sel = ModelSelector(3, 100, seed=1)
    drive(sel, 40)
    sel.set_budget(200)
    assert sel.remaining == 160
    drive(sel, 100)
    sel.select()  # one step in flight: the budget cannot go below the steps started
    with pytest.raises(ValueError, match=r"budget=140 is not allowed: use an integer >= 141"):
        sel.set_budget(140)
    sel.set_budget(141)
    assert sel.remaining == 0 and not sel.done
    arm = sel.in_flight[0]
    sel.update(arm, score(arm, int(sel.pulls[arm]) + 1))
    assert sel.done and sum(sel.pulls) == 141
    with pytest.raises(ValueError, match="budget=True is not allowed"):
        sel.set_budget(True)


def test_added_candidate_gets_forced_pulls_then_competes() -> None:
    sel = ModelSelector(["a", "b"], 120, seed=0)
    drive(sel, 30)
    assert sel.add_candidate("c") == 2 and sel.names == ("a", "b", "c")
    first = drive(sel, NEW_CANDIDATE_PULLS)
    assert first == [2] * NEW_CANDIDATE_PULLS
    drive(sel, 88)
    assert sel.done and sum(sel.pulls) == 120 and sel.pulls[2] >= NEW_CANDIDATE_PULLS
    summary = sel.summary()
    assert set(summary["pulls"]) == {"a", "b", "c"}
    for bad in ("a", "", " ", 3):
        with pytest.raises(ValueError, match="is not allowed: use a new, non-blank name"):
            sel.add_candidate(bad)  # type: ignore[arg-type]


def test_forced_pulls_start_in_parallel_and_respect_availability() -> None:
    sel = ModelSelector(["a", "b"], 60)
    sel.add_candidate("c")
    assert sel.select(available=["a", "b"]) != 2
    assert [sel.select(), sel.select()] == [2, 2]


def test_retired_candidate_keeps_its_index_and_is_never_chosen(tmp_path: Path) -> None:
    sel = ModelSelector(["a", "b", "c", "d"], 200, seed=4)
    drive(sel, 40)
    before = sel.pulls[1]
    sel.retire("b")
    assert sel.names == ("a", "b", "c", "d") and sel.active == ("a", "c", "d")
    sel.save(tmp_path / "sel.json")
    rest = drive(sel, 160)
    assert 1 not in rest and sel.pulls[1] == before and sel.recommend() != 1
    assert sel.summary()["retired"] == ["b"]
    again = ModelSelector.load(tmp_path / "sel.json")
    assert drive(again, 160) == rest
    with pytest.raises(ValueError, match="candidate 'b' is retired"):
        sel.retire(1)


@pytest.mark.parametrize("name", ["successive-halving", "r-sr", "hace-ucb"])
def test_retiring_every_survivor_of_the_halving_lets_the_others_go_on(name: str) -> None:
    """An elimination policy whose survivors all fail (a model selector retires them) goes on
    among the candidates it had rejected: it returned no arm (successive-halving: "kernel
    returned invalid arm -1"; found with the Ray scheduler's orders of events)."""
    sel = ModelSelector(["a", "b", "c", "d", "e"], 60, name, seed=0)
    drive(sel, 40)
    recent = drive(sel, 6)
    for arm in sorted(set(recent))[:3]:  # the survivors, while two stay active
        sel.retire(arm)
    left = [sel.names.index(n) for n in sel.active]
    assert not set(recent) & set(left)  # only candidates it had stopped training are left
    rest = drive(sel, 14)
    assert set(rest) <= set(left) and sel.remaining == 0


@pytest.mark.parametrize(("name", "k"), [("hyperband", 9), ("asha", 4)])
def test_a_schedule_that_lost_candidates_loads_its_own_checkpoint(
    tmp_path: Path, name: str, k: int
) -> None:
    """Retiring candidates down to two shrinks the schedule (Hyperband's three brackets for 9
    -> one, ASHA's three rungs for 4 -> two); Hyperband's position in the third bracket was
    kept, ASHA's goals until its next call, and loading the checkpoint refused them
    ("state.pos[0]=2 is not allowed: use -1..1", "state.goal[0]=2 ..."; found by random
    sequences of operations)."""
    sel = ModelSelector([f"c{i}" for i in range(k)], 200, name, seed=0)
    drive(sel, 150)  # Hyperband: into the third bracket (a third of the budget each)
    for candidate in sel.names[2:]:
        sel.retire(candidate)
    sel.save(tmp_path / "sel.json")
    again = ModelSelector.load(tmp_path / "sel.json")
    assert drive(again, 50) == drive(sel, 50)
    assert sel.remaining == 0 and {r["candidate"] for r in sel.history[150:]} <= {"c0", "c1"}


def test_retire_refusals_one_line() -> None:
    sel = ModelSelector(["a", "b", "c"], 50)
    arm = sel.select()
    with pytest.raises(ValueError, match=r"while 1 of its pulls are in flight") as info:
        sel.retire(arm)
    assert "\n" not in str(info.value)
    sel.update(arm, 0.5)
    sel.retire("c")
    with pytest.raises(ValueError, match="two candidates must stay active"):
        sel.retire("a")
    with pytest.raises(ValueError, match="available: candidate 'c' is not allowed: it is retired"):
        sel.select(available=["c"])
    with pytest.raises(ValueError, match="candidate 'x' is not allowed"):
        sel.retire("x")


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_changes_and_checkpoint_with_pulls_in_flight(name: str, tmp_path: Path) -> None:
    """Every policy survives a grown budget, a retired and an added candidate with pulls in
    flight, and a checkpoint taken then resumes exactly."""

    def run(stop: bool) -> tuple[list[int], list[dict]]:
        sel = ModelSelector(4, 150, name, seed=6, max_pending=2)
        order: list[int] = []
        for step in range(190):
            while len(sel.in_flight) < 2 and sel.remaining > 0:
                order.append(sel.select())
            arm = sel.in_flight[step % 2 if len(sel.in_flight) == 2 else 0]
            sel.update(arm, score(arm, int(sel.pulls[arm]) + 1))
            if step == 30:
                sel.set_budget(190)
            if step == 60 and 3 not in sel.in_flight:
                sel.retire(3)
            if step == 90:
                sel.add_candidate("late")
            if stop and step == 100:
                sel.save(tmp_path / "sel.json")
                sel = ModelSelector.load(tmp_path / "sel.json")
        assert sel.done and sum(sel.pulls) == 190
        return order, sel.history

    assert run(stop=True) == run(stop=False)


def test_a_finished_schedule_replanned_with_fewer_phases_is_finished(tmp_path: Path) -> None:
    """Successive Halving over 4 candidates ends its 2 phases with the budget of 40; with 2 of
    them retired and a budget of 60 the new schedule has 1 phase: the carried phase is its end
    (it was 2, and the checkpoint of that run was refused as corrupt), and the run resumes."""
    sel = ModelSelector(4, 40, "successive-halving", seed=0)
    drive(sel, 40)
    sel.set_budget(60)
    losers = [i for i in range(4) if sel.pulls[i] == 5]
    assert len(losers) == 2
    for arm in losers:
        sel.retire(arm)
    drive(sel, 1)
    sel.save(tmp_path / "sel.json")
    again = ModelSelector.load(tmp_path / "sel.json")
    assert drive(again, 19) == drive(sel, 19)
    assert again.done and sum(again.pulls) == 60
