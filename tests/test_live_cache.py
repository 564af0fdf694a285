"""The live-training cache: task files written atomically, every field checked before use, a
damaged or foreign file named (and recorded again by the build), a folder others could write
never read, a missing build one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from live_fixture import made_up_task, task_file, write_made_up
from risingbandits.instances.live import BUILD_MINUTES
from risingbandits.instances.live_build import build_live
from risingbandits.instances.live_cache import (
    CacheFileError,
    Task,
    cache_folder,
    read_built,
    read_task,
    write_task,
)


def test_a_task_reads_back_as_written(root: Path) -> None:
    task = write_made_up("wine", 3, 16, np.random.default_rng(0))
    path = task_file(root, "wine", 3, 16)
    assert path.is_file() and not list(path.parent.glob(".*"))  # no temporary file left
    back = read_task(path, "wine", 3, 16)
    for name in ("validation", "test", "seconds"):
        np.testing.assert_array_equal(getattr(back, name), getattr(task, name))
    assert back.candidates == task.candidates and back.sizes == task.sizes
    assert (path.parent.stat().st_mode & 0o777) == 0o700


def _rewrite(path: Path, **changes: object) -> None:
    """Write ``path`` again with some arrays or info fields changed."""
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    info = json.loads(str(arrays["info"][()]))
    for key, value in changes.items():
        if key in info:
            info[key] = value
        else:
            arrays[key] = value  # type: ignore[assignment]
    arrays["info"] = np.asarray(json.dumps(info))
    with path.open("wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"rules": "live-v0"}, "rules is 'live-v0', expected 'live-v1'"),
        ({"units": 8}, "units is 8, expected 16"),
        ({"seed": 4}, "seed is 4, expected 3"),
        ({"rules_sha256": "0" * 64}, "rules_sha256 is '000"),
        ({"data_sha256": "f" * 64}, "data_sha256 is 'fff"),
        ({"sizes": {"train": 1, "validation": 0, "test": 1}}, "sizes is"),
        ({"candidates": np.asarray(["a"] * 16)}, "candidates is ('a', "),
        ({"validation": np.full((16, 16), 0.3)}, "validation holds values that are no accuracy"),
        ({"test": np.full((16, 16), 1.5)}, "test holds values that are no accuracy"),
        ({"seconds": np.full((16, 16), -1.0)}, "seconds has values that are not finite"),
        ({"seconds": np.zeros((16, 15))}, "seconds is float64 (16, 15), expected float64 (16, 16)"),
        ({"test": np.zeros((16, 16), np.float32)}, "test is float32"),
    ],
)
def test_a_foreign_or_damaged_file_is_named_with_its_first_problem(
    root: Path, changes: dict[str, object], reason: str
) -> None:
    write_made_up("wine", 3, 16, np.random.default_rng(0))
    path = task_file(root, "wine", 3, 16)
    _rewrite(path, **changes)
    with pytest.raises(CacheFileError) as info:
        read_task(path, "wine", 3, 16)
    assert str(info.value).startswith(f"{path} is foreign or damaged: {reason}")


def test_unreadable_files_are_named(root: Path) -> None:
    write_made_up("wine", 0, 16, np.random.default_rng(0))
    path = task_file(root, "wine", 0, 16)
    path.write_bytes(path.read_bytes()[:500])  # truncated
    with pytest.raises(CacheFileError, match=f"^{path} cannot be read"):
        read_task(path, "wine", 0, 16)
    np.save(path.with_suffix(".tmp.npy"), np.array([{"a": 1}], dtype=object))
    path.write_bytes(path.with_suffix(".tmp.npy").read_bytes())  # a pickle inside
    with pytest.raises(CacheFileError, match=f"^{path} cannot be read"):
        read_task(path, "wine", 0, 16)
    with path.open("wb") as fh:
        np.savez(fh, validation=np.zeros(1))
    with pytest.raises(CacheFileError, match=r"is foreign: it holds the arrays \['validation'\]"):
        read_task(path, "wine", 0, 16)


def test_info_nested_too_deeply_is_named(root: Path) -> None:
    write_made_up("wine", 0, 16, np.random.default_rng(0))
    path = task_file(root, "wine", 0, 16)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["info"] = np.asarray("[" * 100_000 + "]" * 100_000)
    with path.open("wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]
    with pytest.raises(CacheFileError, match="is foreign or damaged: info is JSON nested too"):
        read_task(path, "wine", 0, 16)


def test_the_family_says_it_is_not_built_in_one_line(root: Path) -> None:
    with pytest.raises(ValueError) as info:
        read_built("breast_cancer", 0, 1024)
    missing = task_file(root, "breast_cancer", 0)
    assert str(info.value) == (
        f"live-v1 is not built: run `risingbandits data live` (about {BUILD_MINUTES} minutes "
        "on 2 cores; "
        f"{missing} is missing)"
    )
    with pytest.raises(ValueError) as small:
        read_built("digits", 2, 16)
    assert str(small.value) == (
        f"{task_file(root, 'digits', 2, 16)} is not built: run `risingbandits data live "
        "--datasets digits --seeds 2 --units 16`"
    )


def test_a_damaged_file_tells_the_command_that_records_it_again(root: Path) -> None:
    write_made_up("breast_cancer", 1, 1024, np.random.default_rng(0))
    path = task_file(root, "breast_cancer", 1)
    path.write_bytes(b"not a zip")
    with pytest.raises(CacheFileError) as info:
        read_built("breast_cancer", 1, 1024)
    assert str(info.value).startswith(f"{path} cannot be read (")
    assert str(info.value).endswith("; run `risingbandits data live` to record it again")


def test_a_cache_folder_others_can_write_is_not_read(root: Path) -> None:
    write_made_up("wine", 0, 16, np.random.default_rng(0))
    folder = task_file(root, "wine", 0, 16).parent
    folder.chmod(0o777)
    with pytest.raises(ValueError) as info:
        read_built("wine", 0, 16)
    assert str(info.value).startswith("the live-training cache is not read: ")
    assert "can be written by group or others (mode 777" in str(info.value)
    with pytest.raises(ValueError, match=r"^the live-training cache is not used: "):
        build_live(["wine"], [0], units=16)


def test_units_whose_curves_do_not_fit_in_memory_are_refused_before_any_work(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`data live --units 1000000000000` made every unit's mini-batches at once: minutes of
    growing memory and no output, then a MemoryError."""
    monkeypatch.setattr("risingbandits.instances.memory.available_memory", lambda: 10_000)
    with pytest.raises(ValueError, match=r"^units=100 is not allowed: a 16 x 100 mean table"):
        build_live(["wine"], [0], units=100)
    assert not (root / "live").exists()


def test_the_build_records_a_damaged_file_again_and_keeps_good_ones(root: Path) -> None:
    good = write_made_up("wine", 0, 4, np.random.default_rng(0))
    write_made_up("wine", 1, 4, np.random.default_rng(1))
    damaged = task_file(root, "wine", 1, 4)
    _rewrite(damaged, units=5)
    told: list[str] = []
    steps: list[tuple[int, int]] = []
    report = build_live(
        ["wine"], [0, 1], units=4, progress=lambda *a: steps.append(a), notify=told.append
    )
    assert report.kept == [("wine", 0)] and report.recorded == [("wine", 1)]
    assert told == [f"{damaged} is foreign or damaged: units is 5, expected 4: recording it again"]
    assert steps == [(1, 2), (2, 2)]
    kept = read_task(task_file(root, "wine", 0, 4), "wine", 0, 4)
    np.testing.assert_array_equal(kept.validation, good.validation)  # not recorded again
    again = read_task(damaged, "wine", 1, 4)
    assert again.versions["scikit-learn"] != "0"  # a real recording replaced it


def test_writing_is_atomic(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task: Task = made_up_task("wine", 0, 4, np.random.default_rng(0))
    folder = cache_folder(4)

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="No space left"):
        write_task(folder, task)
    assert list(folder.iterdir()) == []  # neither a half-written file nor a temporary one
