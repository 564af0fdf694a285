"""Issue 14, items 2, 3 and parts of 4-6: the sweep store under damage.

Damaged, copied and foreign part files are reported by ``status``, refused by ``summary``, set
aside and recomputed by ``resume`` (never deleted) and listed by ``verify``; an interrupted
store where one policy has no result is summarised; a full disk is one line and the store
resumes; a changed means file and a hand-edited manifest are named as such.
"""

from __future__ import annotations

import errno
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import risingbandits.experiments.store as store_module
from risingbandits.cli import app
from risingbandits.experiments import Store, StoreError, parse_spec, run_sweep
from risingbandits.experiments.integrity import SPEC_KEY, TASK_KEY
from test_experiments_spec import TINY
from test_experiments_store import read_rows

runner = CliRunner()
FIRST = "i00000-p000-s00000.parquet"


def sweep(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["sweep", *args], env={"COLUMNS": "200"})


def error_line(result, code: int = 2) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == code, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("faults") / "clean"
    run_sweep(parse_spec(TINY), out, executor="serial")
    return out


@pytest.fixture
def store(clean: Path, tmp_path: Path) -> Path:
    out = tmp_path / "store"
    shutil.copytree(clean, out)
    return out


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def flip_a_data_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[64] ^= 0xFF  # inside the first data page (the footer is at the end)
    path.write_bytes(bytes(data))


DAMAGES = {
    "truncated": (FIRST, truncate, "damaged"),
    "empty": (FIRST, lambda p: p.write_bytes(b""), "damaged"),
    "bit flip": (FIRST, flip_a_data_byte, "damaged"),
    "copied": ("copy of i00000-p000-s00000.parquet", None, "duplicate"),
    "renamed over another": ("i00000-p001-s00000.parquet", None, "damaged"),
}


@pytest.mark.parametrize("case", list(DAMAGES))
def test_a_bad_part_is_reported_refused_set_aside_and_recomputed(
    case: str, store: Path, clean: Path
) -> None:
    name, damage, kind = DAMAGES[case]
    target = store / "parts" / name
    if damage is None:  # a copy of the first part under another name
        shutil.copyfile(store / "parts" / FIRST, target)
    else:
        damage(target)

    verified = sweep("verify", str(store))
    assert verified.exit_code == 1 and f"{name}: {kind}" in verified.stdout
    if case != "bit flip":  # the quick check reads footers only
        status = sweep("status", str(store))
        assert f"{name}: {kind}" in status.stdout and "sweep resume" in status.stdout
    line = error_line(sweep("summary", str(store)))
    assert f"holds 1 {kind} part" in line and f"risingbandits sweep resume {store}" in line
    with pytest.raises(StoreError, match=f"holds 1 {kind} part.*sweep resume"):
        Store(store).verified_rows()  # what the reproduction report reads

    before = sorted(p.name for p in (store / "parts").glob("*.parquet"))
    resumed = sweep("resume", str(store), "--executor", "serial")
    assert resumed.exit_code == 0, resumed.output
    assert "set aside 1 damaged, duplicate or foreign part file(s)" in resumed.stderr
    aside = store / "parts" / ".damaged" / name
    assert aside.is_file()  # moved, never deleted
    assert sorted(p.name for p in (store / "parts").glob("*.parquet")) == sorted(
        set(before) - ({name} if kind == "duplicate" else set())
    )
    assert read_rows(store) == read_rows(clean)
    assert sweep("verify", str(store)).exit_code == 0
    summary = json.loads(sweep("summary", str(store), "--format", "json").stdout)
    expected = json.loads(sweep("summary", str(clean), "--format", "json").stdout)
    summary.pop("store"), expected.pop("store")
    assert summary == expected  # no task counted twice, none missing


def test_a_part_of_another_sweep_is_foreign(store: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    run_sweep(
        parse_spec(TINY.replace("sweep_seed = 3", "sweep_seed = 4")), other, executor="serial"
    )
    shutil.copyfile(other / "parts" / FIRST, store / "parts" / FIRST)
    problems = Store(store).status().problems
    assert [(p.path.name, p.kind) for p in problems] == [(FIRST, "foreign")]
    assert "written by another sweep" in problems[0].reason


def test_setting_aside_never_overwrites_an_earlier_file(store: Path) -> None:
    for _ in range(2):
        truncate(store / "parts" / FIRST)
        assert sweep("resume", str(store), "--executor", "serial").exit_code == 0
    aside = sorted(p.name for p in (store / "parts" / ".damaged").iterdir())
    assert aside == [FIRST, f"{FIRST}.1"]


def test_parts_of_a_format_1_store_without_metadata_are_still_checked(store: Path) -> None:
    for path in Store(store).part_files():  # as the first release wrote them
        table = pq.read_table(path).replace_schema_metadata(None)
        pq.write_table(table, path)
        assert TASK_KEY not in (pq.read_metadata(path).metadata or {})
    assert Store(store).status().complete and sweep("verify", str(store)).exit_code == 0
    path = store / "parts" / FIRST
    rows = pq.read_table(path)
    seeds = rows.column("seed").to_numpy().copy()
    seeds[0] = 7  # a cell of no task, with the right number of rows
    pq.write_table(rows.set_column(rows.schema.get_field_index("seed"), "seed", [seeds]), path)
    assert SPEC_KEY not in (pq.read_metadata(path).metadata or {})
    assert Store(store).status().complete  # the quick check trusts a legacy part's row count
    verified = sweep("verify", str(store))
    assert verified.exit_code == 1
    assert f"{FIRST}: damaged, its (horizon, seed) cells are not those of its task" in (
        verified.stdout
    )


def test_summary_of_a_store_where_one_policy_has_no_result_says_what_is_missing(
    store: Path,
) -> None:
    for path in (store / "parts").glob("*-p001-*.parquet"):
        path.unlink()  # ucb1 (policy 1) never finished a task
    result = sweep("summary", str(store))
    assert result.exit_code == 0, result.output
    assert "cells done by policy: ucb1 0/12" in result.stdout
    assert "no (instance, seed) has a result of every policy yet" in result.stdout
    data = json.loads(sweep("summary", str(store), "--format", "json").stdout)
    assert {r["policy"] for r in data["regret"]} == {"cure-ucb", "cure-ucb[sigma=1]"}
    assert data["rank"] == []


def test_a_full_disk_is_one_line_and_the_store_resumes(
    tmp_path: Path, clean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    out = tmp_path / "out"
    real = store_module.write_part_file
    written = []

    def fill_up(rows: pa.Table, sink: object) -> None:
        if len(written) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(rows, sink)
        written.append(1)

    monkeypatch.setattr(store_module, "write_part_file", fill_up)
    line = error_line(sweep("run", str(spec), "--out", str(out), "--executor", "serial"), code=1)
    assert line.startswith(f"error: cannot write {out / 'parts'}")
    assert "No space left on device" in line and f"risingbandits sweep resume {out}" in line
    assert not list(out.rglob("*.tmp"))
    assert len(Store(out).part_files()) == 2
    monkeypatch.setattr(store_module, "write_part_file", real)
    assert sweep("resume", str(out), "--executor", "serial").exit_code == 0
    assert read_rows(out) == read_rows(clean)


def test_a_full_disk_before_the_manifest_says_to_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said to resume, which then found no sweep there."""
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    out = tmp_path / "out"

    def full(path: Path, write: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(store_module, "atomic_write", full)
    line = error_line(sweep("run", str(spec), "--out", str(out), "--executor", "serial"), code=1)
    assert line.startswith(f"error: cannot write {out / 'manifest.json'}")
    assert line.endswith(
        "make room, then run the same `risingbandits sweep run` again (nothing was kept)"
    )


@pytest.mark.parametrize(
    "out, reason",
    [
        ("/sys/risingbandits-test/out", "cannot be written"),  # read-only, even for root
        ("/dev/null/out", "cannot be written"),  # a path through a file
    ],
)
def test_an_unwritable_out_is_one_line(tmp_path: Path, out: str, reason: str) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    line = error_line(sweep("run", str(spec), "--out", out, "--executor", "serial"))
    assert f"out={out!r} {reason}" in line


def test_a_changed_means_file_is_named_with_what_to_do(tmp_path: Path) -> None:
    table = np.vstack([np.linspace(0.1, 0.5, 400), np.linspace(0.2, 0.4, 400)])
    np.save(tmp_path / "curves.npy", table)
    spec = tmp_path / "spec.toml"
    spec.write_text(
        TINY.split("[[instances]]")[0]
        + '[[instances]]\nmeans_file = "curves.npy"\n\n[[policies]]\nname = "ucb1"\n'
    )
    out = tmp_path / "out"
    assert sweep("run", str(spec), "--out", str(out), "--executor", "serial").exit_code == 0
    np.save(tmp_path / "curves.npy", table * 0.9)
    for result in (sweep("resume", str(out)), sweep("run", str(spec), "--out", str(out))):
        line = error_line(result)
        assert "means file 'curves.npy' changed since this sweep started" in line
        assert "put the original back to resume, or run the spec into a new --out" in line
        assert "another spec" not in line and "sweep resume" not in line


def test_a_policy_resolved_differently_by_this_library_is_named(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hash covers each policy's parameters as resolved, so a library whose policy gained a
    parameter or changed a default cannot read an older store as the same spec: the line says
    so, with both versions, beside the hand-edit it cannot be told from."""
    from risingbandits.policies.base import Param
    from risingbandits.policies.stationary.classic import UCB1

    wider = (*UCB1.params_spec, Param("added", 1.0, "a parameter this store never saw"))
    monkeypatch.setattr(UCB1, "params_spec", wider)
    with pytest.raises(StoreError) as caught:
        Store(store).spec()
    line = str(caught.value)
    assert "resolves one of its policies differently from the one that ran it" in line
    assert "a parameter added or a default changed" in line and "\n" not in line
    monkeypatch.undo()
    assert (
        Store(store).spec().hash == json.loads((store / "manifest.json").read_text())["spec_hash"]
    )


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda m: m.update(spec_text=m["spec_text"].replace("seeds = 2", "seeds = 3")),
            "its spec_text does not give its spec_hash",
        ),
        (lambda m: m.update(tasks=m["tasks"] + 1), "tasks and 36 cells but its spec plans"),
        (lambda m: m.update(format=7), "format=7 is not allowed"),
    ],
)
def test_a_hand_edited_manifest_is_refused(store: Path, edit, message: str) -> None:  # type: ignore[no-untyped-def]
    path = store / "manifest.json"
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(manifest))
    for command in ("status", "summary", "resume", "verify"):
        assert message in error_line(sweep(command, str(store)))
    with pytest.raises(StoreError, match=message.split(" but")[0]):
        Store(store).plan()


@pytest.mark.parametrize("foreign", ['{"mine": 1}', "[1, 2]", '{"spec_text": "x"}'])
def test_a_manifest_json_that_is_not_a_sweeps_is_named_as_such(
    tmp_path: Path, foreign: str
) -> None:
    """A user's own manifest.json was refused naming a Python class ("Manifest.__init__() got
    an unexpected keyword argument 'mine'"), not the problem; the file is left as it is."""
    out = tmp_path / "mine"
    out.mkdir()
    (out / "manifest.json").write_text(foreign)
    for command in ("status", "resume"):
        line = error_line(sweep(command, str(out)))
        assert line.startswith(f"error: {out / 'manifest.json'} is not a sweep manifest"), line
        assert "Manifest" not in line and "__init__" not in line
    assert (out / "manifest.json").read_text() == foreign


@pytest.mark.parametrize(
    "spec_text, match",
    [
        ("this is [[ not toml", r"spec_text='this is \[\[ not toml' is not allowed: spec is not"),
        ("", r"spec_text='' is not allowed: sweep_seed: Field required"),
        (5, r"spec_text=5 is not allowed: a spec is text"),
        (None, r"spec_text=None is not allowed: a spec is text"),
        (["a"], r"spec_text=\['a'\] is not allowed: a spec is text"),
    ],
)
def test_a_manifest_with_a_broken_spec_text_is_refused_in_one_line(
    tmp_path: Path, spec_text: object, match: str
) -> None:
    """A spec_text that is not text raised an AttributeError with a traceback; one that is
    not a spec named neither the manifest nor the field."""
    out = tmp_path / "sweep"
    run_sweep(parse_spec(TINY), out, executor="serial")
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["spec_text"] = spec_text
    (out / "manifest.json").write_text(json.dumps(manifest))
    for command in ("status", "resume", "summary", "verify"):
        line = error_line(sweep(command, str(out)))
        assert line.startswith(f"error: {out / 'manifest.json'}: spec_text="), line
        assert re.search(match, line), line
