"""Issue 14, items 4-6: bad input gets one clear line, never a traceback or a silent guess.

Huge horizons and sweeps are refused with the size they would need; complex, ragged and
mislabelled mean tables, non-UTF-8 specs and broken checkpoints are named as such; a damaged
feature cache is rebuilt; ``simulate`` takes a policy name and refuses a fractional seed count.
"""

from __future__ import annotations

import json
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import risingbandits as rb
from risingbandits.cli import app
from risingbandits.cli.errors import as_option
from risingbandits.experiments import SpecError, load_spec, parse_spec
from risingbandits.instances.families import family_instance
from risingbandits.modelselect import ModelSelector
from risingbandits.modelselect.features import bag_of_words, cached_bag_of_words
from risingbandits.policies import make_policy
from test_experiments_spec import TINY

runner = CliRunner()
HUGE = 10**12


def error_line(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


# -- item 4: sizes checked before anything is allocated ------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda: rb.intro(HUGE),
        lambda: rb.ltf([0.5, 0.3], [10, 20], HUGE),
        lambda: rb.from_functions([np.sqrt, np.log1p], HUGE),
        lambda: family_instance("ltf-v1", 0, 0, HUGE),
        lambda: family_instance("concave-v1", 0, 0, HUGE),
    ],
)
def test_a_huge_horizon_is_refused_with_the_memory_it_would_take(build) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=r"horizon T=1,000,000,000,000 is not allowed: a \d x "):
        build()


def test_a_huge_horizon_on_the_command_line_and_in_a_spec_is_one_line(tmp_path: Path) -> None:
    line = error_line(["run", "--horizon", str(HUGE), "--seeds", "2"])
    assert "a 2 x 1,000,000,000,000 mean table takes 16.0 TB" in line and "available" in line
    spec = tmp_path / "huge.toml"
    spec.write_text(TINY.replace("horizons = [300, 120]", "horizons = [1e12]"))
    line = error_line(["sweep", "run", str(spec), "--out", str(tmp_path / "out")])
    assert "instances[0].family: horizon T=1,000,000,000,000 is not allowed" in line
    assert not (tmp_path / "out").exists()


def test_a_sweep_of_too_many_cells_is_refused_before_planning() -> None:
    with pytest.raises(
        SpecError,
        match=r"seeds=100,000,000 is not allowed: 3 instances x 3 "
        r"policies x 2 horizons x 100,000,000 seeds make 1,800,000,000 cells",
    ):
        parse_spec(TINY.replace("seeds = 2", "seeds = 1e8"))


def test_a_plan_holds_seed_ranges_not_lists() -> None:
    from risingbandits.experiments import make_plan

    plan = make_plan(parse_spec(TINY.replace("seeds = 2", "seeds = 100000")))
    assert all(isinstance(t.seeds, range) for t in plan.tasks)
    assert sum(len(t.seeds) for t in plan.tasks) == 100_000 * 9


def test_a_truncated_feature_cache_is_named_and_rebuilt(tmp_path: Path) -> None:
    texts, labels = ["good film", "bad film", "good good"], [1, 0, 1]
    first = cached_bag_of_words(texts, labels, tmp_path, n_features=3)
    (cached,) = tmp_path.glob("*.npz")
    cached.write_bytes(cached.read_bytes()[:40])
    told: list[str] = []
    again = cached_bag_of_words(texts, labels, tmp_path, n_features=3, notify=told.append)
    assert told[0].startswith(f"the cached features {cached} cannot be read")
    assert again.vocabulary == first.vocabulary == bag_of_words(texts, labels, 3).vocabulary
    np.testing.assert_array_equal(again.counts, first.counts)
    assert cached_bag_of_words(texts, labels, tmp_path, n_features=3).vocabulary  # readable


# -- item 5: messages that say what is wrong ---------------------------------------------------


def test_means_files_are_named_for_what_they_are(tmp_path: Path) -> None:
    folder = tmp_path / "curves"
    folder.mkdir()
    line = error_line(["run", "--means", str(folder)])
    assert "is a directory" in line and "does not exist" not in line
    text = tmp_path / "table.npy"
    text.write_text("0.1,0.2\n0.3,0.4\n")
    line = error_line(["run", "--means", str(text)])
    assert "is not a NumPy .npy file" in line and "pickled" not in line
    archive = tmp_path / "table.npz"
    archive.write_text("not a zip")
    assert "is not a NumPy .npz archive" in error_line(["run", "--means", str(archive)])


def test_a_non_utf8_spec_names_its_file(tmp_path: Path) -> None:
    spec = tmp_path / "latin1.toml"
    spec.write_bytes(TINY.replace('"tiny"', '"caf\xe9"').encode("latin-1"))
    with pytest.raises(SpecError, match=r"latin1.toml' is not UTF-8 text \(byte 0xe9"):
        load_spec(spec)
    line = error_line(["sweep", "run", str(spec), "--out", str(tmp_path / "out")])
    assert str(spec) in line and "UTF-8" in line


def test_the_decreasing_table_error_says_how_to_allow_it(tmp_path: Path) -> None:
    np.save(tmp_path / "dips.npy", np.array([[0.1, 0.3, 0.2], [0.1, 0.2, 0.3]]))
    line = error_line(["run", "--means", str(tmp_path / "dips.npy"), "--horizon", "3"])
    assert "decreases at pull 3" in line and "--allow-decreasing" in line


# -- item 6: refused instead of silently accepted ----------------------------------------------


def test_complex_and_ragged_mean_tables_are_refused() -> None:
    with pytest.raises(ValueError, match=r"means has complex values \(dtype complex128\)"):
        rb.from_means(np.array([[0.1 + 0.5j, 0.2], [0.1, 0.2]]))
    with pytest.raises(ValueError, match="means is ragged: arm 0 has 3 pulls and arm 1 has 2"):
        rb.from_means([[0.1, 0.2, 0.3], [0.1, 0.2]])


def test_simulate_takes_a_policy_name_and_refuses_a_fractional_seed_count() -> None:
    inst = rb.intro(500)
    by_name = rb.simulate(inst, "cure-ucb", 500, 3)
    by_object = rb.simulate(inst, make_policy("cure-ucb"), 500, 3)
    np.testing.assert_array_equal(by_name.pulls, by_object.pulls)
    for bad in (2.5, 3.0):
        with pytest.raises(ValueError, match=rf"seeds={bad} is not allowed: use an integer count"):
            rb.simulate(inst, "ucb1", 100, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="policy=42 is not allowed"):
        rb.simulate(inst, 42, 100, 1)  # type: ignore[arg-type]


def saved_run(tmp_path: Path) -> tuple[Path, dict]:
    sel = ModelSelector(["a", "b", "c"], 20, "cure-ucb", seed=1)
    for _ in range(7):
        arm = sel.select()
        sel.update(arm, 0.5)
    path = tmp_path / "sel.json"
    sel.save(path)
    return path, json.loads(path.read_text())


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda p: p["pulls"].__setitem__(0, -1), r"pulls\[0\]=-1 is not allowed"),
        (lambda p: p["pulls"].__setitem__(0, p["pulls"][0] + 1), "must sum to at most t = 7"),
        (lambda p: p.update(t=99), "checkpoint t=99 is not allowed: use an integer in 0..20"),
        (lambda p: p.update(pending=5), "pending=5 is not allowed: use null or an arm index"),
        (
            lambda p: p["state"][0][0].update(shape=[4]),
            r"checkpoint state\.\w+\.\w+: saved array <i8\[4\] does not fit this run \(<i8\[3\]\)",
        ),
        (lambda p: p.pop("rng"), "checkpoint has no rng"),
        (lambda p: p.update(rng=[1, -2]), r"checkpoint rng=\[1, -2\] is not allowed"),
        (lambda p: p["last"].pop(), r"checkpoint last=.* is not allowed: use a list of 3"),
    ],
)
def test_an_inconsistent_checkpoint_is_refused_on_load(tmp_path: Path, edit, message: str) -> None:  # type: ignore[no-untyped-def]
    path, data = saved_run(tmp_path)
    edit(data["policy"])
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message):
        ModelSelector.load(path)


def test_a_consistent_checkpoint_still_loads(tmp_path: Path) -> None:
    path, _ = saved_run(tmp_path)
    assert ModelSelector.load(path).t == 7


# -- the parser's refusals, and refusals after a progress bar: exactly one line ----------------


def only_line(args: list[str]) -> str:
    """The whole of stderr, which must be one ``error:`` line (no blank line, no box)."""
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    return result.stderr.strip()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "--horizon", "abc"], "--horizon='abc' is not allowed: input should be a valid"),
        (["run", "--seeds=nan"], "--seeds='nan' is not allowed: input should be a valid integer"),
        (["run", "--workers", "0"], "--workers='0' is not allowed: input should be greater than"),
        (["sweep", "summary", "x", "--format", "nope"], "--format='nope' is not allowed: 'nope'"),
        (["run", "--bogus"], "No such option: --bogus (see 'risingbandits run --help')"),
        (["nope"], "No such command 'nope'"),
        (["sweep", "run", "x.toml"], "Missing option '--out'"),
    ],
)
def test_a_refusal_of_the_parser_is_one_line(args: list[str], expected: str) -> None:
    """Typer drew a box of five lines that did not show the value given."""
    assert expected in only_line(args)


def test_a_group_without_arguments_still_shows_its_help() -> None:
    result = runner.invoke(app, ["sweep"])
    assert result.exit_code == 2 and "Usage: risingbandits sweep" in result.output


def test_a_refusal_after_the_progress_bar_opened_is_one_line(tmp_path: Path) -> None:
    """A progress bar on a stderr that is not a terminal drew nothing but left a blank line
    before the error."""
    means = tmp_path / "good.npy"
    np.save(means, np.tile(np.linspace(0.1, 0.5, 60), (2, 1)))
    assert "horizon=10000 is not allowed" in only_line(
        ["run", "--seeds", "2", "--means", str(means)]
    )


# -- messages that name the option as typed (branch cli-msgs) ----------------------------------


def test_a_scheduler_that_is_no_address_names_the_option(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    line = error_line(["sweep", "run", str(spec), "--out", str(tmp_path / "o"), "--scheduler", "x"])
    assert line.startswith("error: --scheduler='x' is not allowed: ") and "tcp://" in line


@pytest.mark.parametrize("content", [b"", b"\x00\xffnot an archive\x93" * 7, b"zip"])
def test_a_garbage_curves_file_names_curves_and_the_file(tmp_path: Path, content: bytes) -> None:
    folder = tmp_path / "curves"
    folder.mkdir()
    garbage = folder / "curves.npz"
    if content == b"zip":  # a zip archive whose member is no array
        with zipfile.ZipFile(garbage, "w") as archive:
            archive.writestr("lr.npy", b"garbage")
    else:
        garbage.write_bytes(content)
    for command in (["run", "--seeds", "1"], ["explain"]):
        line = error_line([*command, "--instance", "imdb-v1", "--curves", str(folder)])
        assert line.startswith(f"error: --curves={str(folder)!r} is not allowed: "), line
        assert str(garbage) in line
    line = error_line(["modelselect", "imdb", "--curves", str(garbage), "--budget", "100"])
    assert line.startswith(f"error: --curves={str(garbage)!r} is not allowed: "), line


@pytest.mark.parametrize("kind", ["npy", "npz", "csv", "header"])
def test_an_empty_means_table_is_one_line_without_a_numpy_warning(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / f"empty.{'csv' if kind == 'header' else kind}"
    if kind == "npy":
        np.save(path, np.zeros((0, 0)))
    elif kind == "npz":
        np.savez(path, np.zeros((0, 4)))
    else:
        path.write_text("# arm,pulls\n" if kind == "header" else "")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "input contained no data" was printed
        line = error_line(["run", "--means", str(path)])
    assert line.startswith(f"error: --means={str(path)!r} holds no numbers"), line


@pytest.mark.parametrize(
    "args, start",
    [
        (["run", "--instance", ""], "--instance=''"),
        (["run", "--instance="], "--instance=''"),
        (["explain", "--out", ""], "--out=''"),
        (["sweep", "status", ""], "an empty argument ('')"),
        (["run", "--noise", "gaussian:"], "--noise='gaussian:'"),
        (["run", "--noise", "gaussian:-1"], "--noise='gaussian:-1'"),
    ],
)
def test_empty_values_are_refused_not_taken_for_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], start: str
) -> None:
    monkeypatch.chdir(tmp_path)  # explain --out '' wrote into the working directory
    assert error_line(args).startswith(f"error: {start} is not allowed: ")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args, start",
    [
        (["run", "--budget", "5", "--budget-kind", "x"], "--budget-kind='x' is not allowed"),
        (["run", "--horizon", "0"], "--horizon=0 is not allowed"),
        (["run", "--policy", "x"], "--policy='x' is not allowed"),
        (["run", "--preset", "x"], "cure-ucb: --preset='x' is not allowed"),
        (["run", "--instance", "x"], "--instance='x' is not allowed"),
        (["theory", "horizon-awareness", "--policies", "x"], "--policies='x' is not allowed"),
    ],
)
def test_library_refusals_name_the_option_as_typed(args: list[str], start: str) -> None:
    assert error_line(args).startswith(f"error: {start}")


def test_a_sweep_summary_refusal_names_the_option(tmp_path: Path) -> None:
    from risingbandits.experiments import run_sweep

    run_sweep(parse_spec(TINY), tmp_path / "s", executor="serial")
    line = error_line(["sweep", "summary", str(tmp_path / "s"), "--horizon", "7"])
    assert line.startswith("error: --horizon=7 is not allowed: the sweep has horizons")


def test_only_a_field_the_command_has_is_renamed() -> None:
    options = {"seeds": "--seeds", "budget_kind": "--budget-kind", "horizon": "--horizon"}
    assert as_option("seeds=0 is not allowed", options) == "--seeds=0 is not allowed"
    assert as_option("T=0 is not allowed", options) == "--horizon=0 is not allowed"
    for line in ("sigma=2 is not allowed", "d/manifest.json: seeds=1 x", "noise seeds=1"):
        assert as_option(line, options) == line
