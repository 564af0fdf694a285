"""Issue 23, items 2 and 8: a crafted model-selection checkpoint is refused with one line naming
the field (never a traceback, never memory it would take to inflate), and concurrent saves do
not collide."""

from __future__ import annotations

import base64
import json
import os
import threading
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from risingbandits.modelselect import ModelSelector
from risingbandits.modelselect import checkpoint as checkpoint_module


def saved(tmp_path: Path, policy: str = "cure-ucb", **kwargs: Any) -> tuple[Path, dict]:
    """A checkpoint after 70 steps (its history table grown past 64 pulls) with a pull in
    flight, and its data."""
    sel = ModelSelector(["a", "b", "c"], 200, policy, seed=1, **kwargs)
    for _ in range(70):
        arm = sel.select()
        sel.update(arm, 0.3 + 0.1 * arm)
    sel.select()
    path = tmp_path / "sel.json"
    sel.save(path)
    return path, json.loads(path.read_text())


def refused(path: Path, match: str) -> str:
    with pytest.raises(ValueError, match=match) as info:
        ModelSelector.load(path)
    assert "\n" not in str(info.value)
    return str(info.value)


def edited(tmp_path: Path, edit: Callable[[dict], Any], policy: str = "cure-ucb") -> Path:
    path, data = saved(tmp_path, policy)
    edit(data)
    path.write_text(json.dumps(data))
    return path


def array(data: dict, field: str) -> dict:
    """The encoded array at ``field`` (e.g. ``hist.counts``) of the policy's saved state."""
    state = data["policy"]["state"]
    names = {"hist": 0, "counts": 0, "prefix": 1, "win": 0, "arms": 0, "pushes": 4, "order": 2}
    for part in field.split("."):
        state = state[names[part]]
    return state


def encoded(raw: bytes) -> str:
    return base64.b64encode(zlib.compress(raw, 9)).decode()


@pytest.mark.parametrize(
    "text, match",
    [
        ('"budget": 200', r"checkpoint budget=inf is not allowed: use an integer in 1\.\."),
        ('"seed": 1', r"checkpoint seed=inf is not allowed: use an integer >= 0"),
        ('"noise_proxy": 0.5', r"checkpoint noise_proxy=nan is not allowed"),
    ],
)
def test_infinite_and_nan_settings_are_refused(tmp_path: Path, text: str, match: str) -> None:
    path, _ = saved(tmp_path)
    value = "NaN" if "noise" in text else "Infinity"
    raw = path.read_text()
    assert text in raw
    path.write_text(raw.replace(text, text.split(":")[0] + ": " + value, 1))  # the selector's
    refused(path, match)


def test_deeply_nested_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"format": "risingbandits.modelselect/3", "trace": ' + "[" * 200_000)
    refused(path, "cannot be read: it is nested too deeply")


def test_an_integer_of_5000_digits_is_refused_as_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "digits.json"
    path.write_text('{"format": "risingbandits.modelselect/4", "seed": ' + "9" * 5000 + "}")
    refused(path, rf"^checkpoint {str(path)!r} cannot be read: .*4300 digits")


def test_a_checkpoint_is_on_disk_before_it_replaces_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a power cut the checkpoint is the old one or the new one, never an empty file: the
    part file is flushed to disk (fsync) before the rename. (``os`` is patched for the whole
    process: other files, Numba's cache, may be written meanwhile; only ours are recorded.)"""
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    target = tmp_path / "sel.json"

    def fsync(fd: int) -> None:
        if Path(os.readlink(f"/proc/self/fd/{fd}")).parent == tmp_path:
            events.append("fsync")
        real_fsync(fd)

    def replace(source: Any, dest: Any) -> None:
        if Path(dest) == target:
            events.append("rename")
        real_replace(source, dest)

    monkeypatch.setattr(checkpoint_module.os, "fsync", fsync)
    monkeypatch.setattr(checkpoint_module.os, "replace", replace)
    ModelSelector(3, 10).save(target)
    assert events == ["fsync", "rename"]
    assert ModelSelector.load(target).budget == 10


def test_a_path_that_cannot_hold_a_checkpoint_is_one_line(tmp_path: Path) -> None:
    """A folder, a missing folder or no path at all gave IsADirectoryError, FileNotFoundError
    and TypeError."""
    sel = ModelSelector(3, 10)
    for path, why in [
        (tmp_path, "it is a folder"),
        (tmp_path / "missing" / "sel.json", r"\(No such file or directory\): give a file in an"),
    ]:
        with pytest.raises(
            ValueError, match=rf"^checkpoint {str(path)!r} cannot be written.*{why}"
        ):
            sel.save(path)
    assert list(tmp_path.iterdir()) == []  # no part file left
    for call in (ModelSelector.load, sel.save):
        with pytest.raises(ValueError, match=r"^path=3 is not allowed: use a file path"):
            call(3)  # type: ignore[operator]


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda d: d.update(in_flight=[99]), r"checkpoint in_flight=\[99\] is not allowed"),
        (lambda d: d.update(in_flight=[0] * 500), r"in_flight=.* at most 130"),
        (
            lambda d: d["candidates"].update(forced=[[99, 1]]),
            r"checkpoint candidates\.forced=\[99, 1\] is not allowed",
        ),
        (lambda d: d.update(max_pending="abc"), "checkpoint max_pending='abc' is not allowed"),
        (
            lambda d: d["candidates"].update(active=[0, 0, 0]),
            r"checkpoint candidates\.active=\[0, 0, 0\] is not allowed: use two or more different",
        ),
        (
            lambda d: d["history"]["scores"].__setitem__(3, float("nan")),
            r"checkpoint history\.scores=.* is not allowed: use one number in \[0, 1\]",
        ),
        (lambda d: d.update(budget=50), "checkpoint budget=50 is not allowed: use at least the 70"),
        (
            lambda d: d.update(score_range="01"),
            "checkpoint score_range='01' is not allowed",
        ),
        (
            lambda d: d["history"]["metrics"].append([999, {}]),
            r"checkpoint history\.metrics=\[999, \{\}\] is not allowed",
        ),
        (
            lambda d: d["policy"].update(horizon=10**20),
            r"checkpoint horizon=10{20} is not allowed: use an integer in 1\.\.",
        ),
        (
            lambda d: d["policy"].update(n_arms=2, pulls=[1, 1], last=[0.3, 0.4], pending=None),
            r"checkpoint policy\.n_arms=2 is not allowed: this selector's is 3",
        ),
        (
            lambda d: d["policy"]["pulls"].reverse(),
            r"checkpoint policy\.pulls=.* is not allowed: this selector's is",
        ),
        (
            lambda d: d.update(trace=[[0, 0, [0, 1, 2], {}, {}]]),
            r"checkpoint trace\[0\]=\[0, 0\] is not allowed: use a round >= 1",
        ),
        (
            lambda d: d["policy"]["policy"].update(params=["eps"]),
            r"checkpoint policy\.policy=.* is not allowed",
        ),
        (
            lambda d: d["policy"]["last"].__setitem__(0, 85.0),
            r"checkpoint last\[0\]=85\.0 is not allowed: use a number in \[-1, 2\]",
        ),
        # states the API cannot reach, and numbers too large for a float
        (lambda d: d.update(in_flight=[0] * 20), r"in_flight=.* use at most 3 pulls \(max_pending"),
        (
            lambda d: d.update(max_pending=2, in_flight=[0, 1, 2]),
            r"checkpoint in_flight=\[0, 1, 2\] is not allowed: use at most 2 pulls",
        ),
        (
            lambda d: d["candidates"]["names"].__setitem__(0, ""),
            r"checkpoint candidates\.names=\['', 'b', 'c'\] is not allowed: .* non-blank names",
        ),
        (
            lambda d: d["history"]["metrics"].append([3, {"loss": float("nan")}]),
            r"checkpoint history\.metrics=\[3, \{'loss': nan\}\] is not allowed: .*JSON values",
        ),
        (
            lambda d: d["candidates"].update(forced=[[0, 1]]),
            r"candidates\.forced=\[0, 1\] is not allowed: candidate 0 has \d+ pulls reported",
        ),
        (lambda d: d.update(noise_proxy=10**400), r"checkpoint noise_proxy=1000.*\.\.\. is not"),
    ],
)
def test_a_crafted_field_is_refused_in_one_line(
    tmp_path: Path, edit: Callable[[dict], Any], match: str
) -> None:
    refused(edited(tmp_path, edit), match)


def trace_rows(tmp_path: Path, edit: Callable[[list], Any]) -> Path:
    """A checkpoint with a trace (70 steps reported, one in flight), its rows edited."""
    path, data = saved(tmp_path, trace=True)
    edit(data["trace"])
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda rows: rows.extend(list(rows)), r"trace\[71\]=1 is not allowed: use a round in"),
        (lambda rows: rows.__delitem__(5), r"trace\[5\]=7 is not allowed: use a round in 3\.\.6"),
        (lambda rows: rows.__delitem__(-1), r"trace='70 rows' .* last round must be 71\.\.74"),
        (lambda rows: rows.clear(), r"trace='0 rows' is not allowed"),
    ],
)
def test_trace_rows_that_do_not_match_the_steps_are_refused(
    tmp_path: Path, edit: Callable[[list], Any], match: str
) -> None:
    refused(trace_rows(tmp_path, edit), match)


def test_trace_rows_a_cancel_repeats_load(tmp_path: Path) -> None:
    """A select, a cancel and a select record two rows of one round: a state the API reaches."""
    loaded = ModelSelector.load(trace_rows(tmp_path, lambda rows: rows.insert(5, rows[5])))
    assert loaded.t == 70 and loaded.trace().rounds.shape == (72,)
    sel = ModelSelector(3, 50, "cure-ucb", trace=True)
    for _ in range(5):
        sel.update(sel.select(), 0.5)
    sel.cancel(sel.select())
    sel.select()
    sel.cancel(sel.select())
    again = ModelSelector.from_state_dict(json.loads(json.dumps(sel.state_dict())))
    assert again.in_flight == sel.in_flight and list(again.trace().rounds) == [
        1,
        2,
        3,
        4,
        5,
        6,
        6,
        7,
    ]


def test_a_huge_budget_loads_without_allocating_it(tmp_path: Path) -> None:
    """A budget (and policy horizon) of 10^15 is a number, not an allocation: the issue's
    crafted ``policy.horizon`` gave a MemoryError."""

    def huge(d: dict) -> None:
        d["budget"] = d["policy"]["horizon"] = 10**15

    path = edited(tmp_path, huge, "red-ucb")  # horizon-free: its state holds no T
    tracemalloc.start()
    try:
        sel = ModelSelector.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sel.budget == 10**15 and peak < 20_000_000


def test_a_capacity_the_run_never_reached_is_refused_before_allocating(tmp_path: Path) -> None:
    def claim(d: dict) -> None:
        d["budget"] = d["policy"]["horizon"] = 10**15
        d["policy"]["capacity"] = 2**40

    refused(edited(tmp_path, claim), r"checkpoint capacity=1099511627776 is not allowed: .*at most")


def test_a_zip_bomb_is_refused_without_being_inflated(tmp_path: Path) -> None:
    """A 200 MB array compressed to ~200 kB in place of the 3 x (C + 1) prefix sums: refused
    after inflating at most the array's own size (the unbounded inflate peaked at its full
    size)."""
    bomb = 200_000_000
    path, data = saved(tmp_path)
    prefix = array(data, "hist.prefix")
    prefix.update(zlib_b64=encoded(bytes(bomb)))
    path.write_text(json.dumps(data))
    assert path.stat().st_size < 1_000_000
    size = f"{3 * prefix['shape'][1] * 8:,}"
    tracemalloc.start()
    try:
        refused(path, rf"checkpoint state\.hist\.prefix=.* inflates beyond the {size} bytes")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < bomb / 20


@pytest.mark.parametrize(
    "policy, field, value, match",
    [
        ("cure-ucb", "hist.counts", 500, r"state\.hist\.counts\[0\]=500 is not allowed: use 0\.\."),
        ("sw-ucb", "win.arms", 7, r"state\.win\.arms\[0\]=7 is not allowed: use -1\.\.2"),
        ("sw-ucb", "win.pushes", 10**6, r"state\.win\.pushes\[0\]=1000000 is not allowed"),
        ("ser4", "order", -9, r"state\.order\[0\]=-9 is not allowed: use 0\.\.2"),
    ],
)
def test_state_values_used_as_indices_are_checked(
    tmp_path: Path, policy: str, field: str, value: int, match: str
) -> None:
    """Compiled kernels do not check bounds: an arm index or a count beyond its array would
    read or write outside it."""
    path, data = saved(tmp_path, policy)
    target = array(data, field)
    target.update(zlib_b64=encoded(np.full(target["shape"], value, "<i8").tobytes()))
    path.write_text(json.dumps(data))
    refused(path, match)


def test_concurrent_saves_do_not_collide(tmp_path: Path) -> None:
    sel = ModelSelector(3, 100, seed=0)
    for _ in range(10):
        sel.update(sel.select(), 0.5)
    path, errors = tmp_path / "sel.json", []

    def save_many() -> None:
        for _ in range(15):
            try:
                sel.save(path)
            except Exception as exc:  # any failure is the bug
                errors.append(exc)

    threads = [threading.Thread(target=save_many) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [p.name for p in tmp_path.iterdir()] == ["sel.json"]
    assert ModelSelector.load(path).t == 10


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into a checkpoint's JSON (the first three items of each list)."""
    found = [prefix]
    if isinstance(value, dict | list):
        items = value.items() if isinstance(value, dict) else enumerate(value[:3])
        for key, item in items:
            found += paths(item, (*prefix, key))
    return found


def test_any_field_set_to_anything_loads_or_is_refused_in_one_line(tmp_path: Path) -> None:
    """Every field, nested ones included, set to each of a dozen wrong values: the checkpoint
    loads (and the selector keeps working) or is refused with one ValueError line."""
    sel = ModelSelector(["a", "b", "c"], 200, "cure-ucb", seed=1, trace=True)
    for i in range(70):
        arm = sel.select()
        sel.update(arm, 0.3 + 0.1 * arm, metrics={"m": i})
    sel.add_candidate("d")
    sel.select()
    base = json.dumps(sel.state_dict())
    weird = [None, "x", -1, 0, 10**30, 1e300, float("nan"), [], {}, [[1]], True, 2.5]
    for path in paths(json.loads(base))[1:]:
        for value in weird:
            data = json.loads(base)
            node = data
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
            try:
                again = ModelSelector.from_state_dict(data)
            except ValueError as exc:
                assert "\n" not in str(exc), (path, value)
                continue
            again.update(again.select(), 0.5)
            again.save(tmp_path / "again.json")


def test_save_refuses_to_replace_a_file_that_is_not_a_checkpoint(tmp_path: Path) -> None:
    """``save`` replaced any file without a word (the CLI's ``--checkpoint`` refused it)."""
    sel = ModelSelector(3, 20, seed=0)
    sel.update(sel.select(), 0.5)
    mine = tmp_path / "results.json"
    mine.write_text('{"accuracy": 0.91}\n')
    with pytest.raises(ValueError) as error:
        sel.save(mine)
    assert str(error.value) == (
        f"checkpoint {str(mine)!r} is not written: the file there is not a checkpoint; give "
        "another path"
    )
    assert mine.read_text() == '{"accuracy": 0.91}\n'
    # another selector's checkpoint is replaced, and so is this selector's own, save after save
    path = tmp_path / "sel.json"
    ModelSelector(2, 10, seed=1).save(path)
    sel.save(path)
    sel.update(sel.select(), 0.6)
    sel.save(path)
    loaded = ModelSelector.load(path)
    assert loaded.t == sel.t
    loaded.save(path)
    assert ModelSelector.load(path).state_dict() == sel.state_dict()
