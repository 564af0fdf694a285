"""Regenerate the IMDB learning curves from the raw reviews, resumably.

A curve is the mean over N independent runs of a learner's 0/1 reward at each pull, where a run
feeds the learner every review once in a fresh random order (Metelli et al.'s
``IMDB_learning_curves_generator``: ``curve[n - 1]`` is the expected reward of the n-th pull).
Run r of learner L draws its order and initial weights from ``SeedSequence([seed, crc32(L),
r])``, so a curve does not depend on how the runs were split between workers or sessions.

Progress is kept in ``<out>.parts/``: one file per chunk of runs (the per-pull sum of rewards),
written beside and renamed into place, plus a manifest of the settings. An interrupted job
started again with the same settings skips the chunks already there; parts made with other
settings are refused. The finished curves are written to ``<out>`` (an ``.npz`` with one array
per learner, the format of the shared curves) and a ``<out>.json`` sidecar, then the parts are
removed.
"""

from __future__ import annotations

import json
import shutil
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

from risingbandits.modelselect.features import RULE, BagOfWords
from risingbandits.modelselect.learners import LearnerSpec, new_state, run_stream
from risingbandits.outputs import atomic_write
from risingbandits.policies.machinery.checkpoint import shown

CHUNK_RUNS = 5
MAX_RUNS = 10_000
"""The most runs per learner (the default is 100): the parts kept until the end hold 8 bytes
per pull for every ``CHUNK_RUNS`` runs, about 0.8 GB per learner at 10,000 runs of 50,000."""
PARTS_FORMAT = "risingbandits.curve-parts/1"


def run_generator(seed: int, learner: str, run: int) -> np.random.Generator:
    """The generator of run ``run`` of ``learner`` (order of the reviews, initial weights)."""
    key = np.random.SeedSequence([seed, zlib.crc32(learner.encode()), run])
    return np.random.default_rng(key)


def curve_sum(bow: BagOfWords, spec: LearnerSpec, seed: int, runs: range, pulls: int) -> np.ndarray:
    """Per-pull number of right predictions of ``spec`` over the given runs (int64)."""
    indptr, ind, val, labels = bow.arrays()
    total = np.zeros(pulls)
    for r in runs:
        rng = run_generator(seed, spec.name, r)
        state = new_state(spec, bow.n_features, rng)
        order = rng.permutation(bow.n_docs)[:pulls]
        run_stream(state, indptr, ind, val, labels, order, total)
    return total.astype(np.int64)


def _parts_dir(out: Path) -> Path:
    return out.with_name(out.name + ".parts")


def _check_manifest(parts: Path, manifest: dict[str, Any]) -> None:
    path = parts / "manifest.json"
    if path.is_file():
        try:
            saved = json.loads(path.read_text())
        except (OSError, ValueError, RecursionError) as exc:
            raise ValueError(f"{path} cannot be read ({exc}): delete {parts}") from None
        if saved != manifest:
            changed = sorted(
                k for k in manifest if not isinstance(saved, dict) or saved.get(k) != manifest[k]
            )
            raise ValueError(
                f"{parts} holds runs made with other settings ({', '.join(changed)}): "
                "delete it or choose another --out"
            )
        return
    parts.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda fh: fh.write(json.dumps(manifest).encode()))


def _read_chunk(path: Path, pulls: int, runs: int) -> np.ndarray:
    """The saved sum of ``runs`` runs, checked: ``pulls`` counts of right predictions, each in
    0..runs (a damaged file would otherwise be summed into the curves unnoticed). A file that
    fails raises a ValueError naming it, like the manifest: the user deletes it."""
    again = "delete it to compute its runs again"
    try:
        with path.open("rb") as fh:
            counts = np.lib.format.read_array(fh, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise ValueError(f"{path} cannot be read ({exc}): {again}") from None
    if counts.dtype != np.int64 or counts.shape != (pulls,):
        raise ValueError(
            f"{path} is {counts.dtype} of shape {counts.shape}, not int64 of shape ({pulls},): "
            f"{again}"
        )
    if counts.min() < 0 or counts.max() > runs:
        raise ValueError(
            f"{path} holds counts {counts.min()}..{counts.max()}, not within 0..{runs} (the "
            f"runs it sums): {again}"
        )
    return counts


def sidecar_path(out: Path) -> Path:
    """The ``<out>.json`` sidecar written beside the curves ``out``."""
    return out.with_name(out.name + ".json")


def regenerate_curves(
    bow: BagOfWords,
    learners: Sequence[LearnerSpec],
    runs: int,
    out: str | Path,
    *,
    seed: int = 0,
    pulls: int | None = None,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, np.ndarray]:
    """Mean learning curve of each learner over ``runs`` runs of ``pulls`` pulls (default: every
    review once); written to ``out`` and returned. ``workers`` threads run chunks of
    ``CHUNK_RUNS`` runs in parallel (the compiled learners release the GIL).
    ``progress(done_runs, total_runs)`` is called after each chunk, in the calling thread.
    """
    if not 1 <= runs <= MAX_RUNS:
        raise ValueError(f"runs={shown(runs)} is not allowed: use an integer in 1..{MAX_RUNS:,}")
    if seed < 0:
        raise ValueError(f"seed={shown(seed)} is not allowed: use an integer >= 0")
    if workers < 1:
        raise ValueError(f"workers={workers} is not allowed: use an integer >= 1")
    n_pulls = bow.n_docs if pulls is None else int(pulls)
    if not 1 <= n_pulls <= bow.n_docs:
        raise ValueError(f"pulls={pulls} is not allowed: use 1..{bow.n_docs} (one pass at most)")
    target = Path(out)
    parts = _parts_dir(target)
    manifest = {
        "format": PARTS_FORMAT,
        "corpus": bow.digest,
        "features": f"{RULE}-{bow.n_features}",
        "seed": seed,
        "pulls": n_pulls,
        "chunk_runs": CHUNK_RUNS,
    }
    _check_manifest(parts, manifest)
    spans = [range(a, min(a + CHUNK_RUNS, runs)) for a in range(0, runs, CHUNK_RUNS)]
    chunks = [
        (spec, span, parts / f"{spec.name}.{span.start:06d}-{span.stop:06d}.npy")
        for spec in learners
        for span in spans
    ]
    todo = [c for c in chunks if not c[2].is_file()]
    for _, span, path in chunks:  # a damaged chunk is named now, not after the others' runs
        if path.is_file():
            _read_chunk(path, n_pulls, len(span))
    total = runs * len(learners)
    done = total - sum(len(span) for _, span, _ in todo)
    if progress is not None:
        progress(done, total)

    def work(spec: LearnerSpec, span: range, path: Path) -> int:
        counts = curve_sum(bow, spec, seed, span, n_pulls)
        atomic_write(path, lambda fh: np.save(fh, counts))
        return len(span)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(work, *chunk) for chunk in todo]
        try:
            for future in as_completed(futures):
                done += future.result()
                if progress is not None:
                    progress(done, total)
        except BaseException:
            for future in futures:
                future.cancel()
            raise

    curves: dict[str, Any] = {}
    for spec in learners:
        counts = sum(_read_chunk(path, n_pulls, len(span)) for s, span, path in chunks if s is spec)
        curves[spec.name] = np.asarray(counts, np.float64) / runs
    atomic_write(target, lambda fh: np.savez(fh, **curves))
    sidecar = {**manifest, "runs": runs, "learners": [s.name for s in learners]}
    atomic_write(sidecar_path(target), lambda fh: fh.write(json.dumps(sidecar, indent=2).encode()))
    shutil.rmtree(parts)
    return curves
