"""``risingbandits modelselect imdb``: a policy trains real learners live on IMDB reviews."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from risingbandits.cli.data import DEFAULT_LEARNERS, CacheDir, ImdbDir, Learners
from risingbandits.cli.errors import UserError, user_errors
from risingbandits.cli.progress import bar_task, progress_bar
from risingbandits.modelselect.imdb_data import load_features
from risingbandits.modelselect.learners import parse_learners
from risingbandits.modelselect.live import (
    DEFAULT_HOLDOUT,
    CurveRegret,
    curve_regret,
    load_curve_table,
    run_live,
)
from risingbandits.policies import make_policy, parse_params

REGRET_BASIS = (
    "regret is measured on the learning curves' expected values (their mean over training "
    "runs), not on this run's rewards"
)

app = typer.Typer(help="Online model selection with rising-bandit policies.", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Online model selection with rising-bandit policies."""


def _curve_table(curves: Path, names: list[str]) -> np.ndarray:
    """The learning curves of ``names`` in ``--curves``, read before any training."""
    try:
        return load_curve_table(curves, names)
    except ValueError as exc:
        raise UserError(f"--curves={str(curves)!r} is not allowed: {exc}") from None


@user_errors
def imdb(
    policy: Annotated[str, typer.Option(help="Policy (see `risingbandits list`).")] = "cure-ucb",
    budget: Annotated[int, typer.Option(help="Pulls (training steps) in total.")] = 50_000,
    seed: Annotated[int, typer.Option(help="Seed of the policy, split and learners.")] = 0,
    preset: Annotated[str, typer.Option(help="Parameter preset of the policy.")] = "imdb",
    param: Annotated[
        list[str] | None, typer.Option(help="Policy parameter NAME=VALUE (repeatable).")
    ] = None,
    learners: Learners = DEFAULT_LEARNERS,
    holdout: Annotated[int, typer.Option(help="Held-out reviews for final accuracy.")] = (
        DEFAULT_HOLDOUT
    ),
    curves: Annotated[
        Path | None,
        typer.Option(help="Learning curves for the regret (.npz or folder; default: shared)."),
    ] = None,
    cache_dir: CacheDir = None,
    imdb_dir: ImdbDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Train the learners live under the policy: pulls, reward, held-out accuracy, regret."""
    specs = parse_learners(learners)
    params = parse_params(policy, param or [])
    make_policy(policy, preset=preset, **params)
    if budget < len(specs):
        raise UserError(
            f"--budget={budget} is not allowed: use at least the number of learners ({len(specs)})"
        )
    if seed < 0:
        raise UserError(f"--seed={seed} is not allowed: use a non-negative integer")
    given_curves = None if curves is None else _curve_table(curves, [s.name for s in specs])
    if cache_dir is not None and cache_dir.exists() and not cache_dir.is_dir():
        raise UserError(
            f"--cache-dir={str(cache_dir)!r} is not allowed: it is a file, not a directory"
        )
    bow = load_features(cache_dir, imdb_dir, notify=Console(stderr=True).print)
    start = time.perf_counter()
    with progress_bar(disable=as_json) as bar:
        result = run_live(
            bow,
            specs,
            policy,
            budget,
            seed,
            preset=preset,
            params=params,
            holdout=holdout,
            progress=bar_task(bar, f"{policy} pulls", budget),
        )
    elapsed = time.perf_counter() - start
    best_live = int(np.argmax(result.holdout_accuracy))
    regret: CurveRegret | None = None
    note = ""
    try:
        regret = curve_regret(
            result,
            load_curve_table(None, result.learners) if given_curves is None else given_curves,
        )
    except ValueError as exc:
        if curves is not None:
            raise
        note = f"regret not available: {exc}"
    data: dict[str, Any] = {
        "policy": result.policy,
        "budget": budget,
        "seed": seed,
        "holdout": holdout,
        "learners": list(result.learners),
        "pulls": result.pulls.tolist(),
        "rewards": result.rewards.tolist(),
        "cumulative_reward": result.cumulative_reward,
        "holdout_accuracy": result.holdout_accuracy.tolist(),
        "live_best_learner": result.learners[best_live],
        "regret_basis": REGRET_BASIS,
        "recommended": result.learners[result.recommended],
        "recommended_accuracy": float(result.holdout_accuracy[result.recommended]),
        "best_accuracy": float(result.holdout_accuracy.max()),
        "best_fixed_learner": regret.best_learner if regret else None,
        "optimal_value": regret.optimal_value if regret else None,
        "expected_reward": regret.collected if regret else None,
        "regret": regret.regret if regret else None,
        "elapsed_s": round(elapsed, 3),
    }
    if as_json:
        typer.echo(json.dumps(data))
        return
    console = Console(highlight=False)
    params_text = ", ".join(f"{k}={v}" for k, v in result.policy["params"].items())
    table = Table(title=f"{policy} ({params_text}), budget {budget:,}, seed {seed}")
    for column in ("learner", "pulls", "reward", f"held-out accuracy ({holdout:,})"):
        table.add_column(column, justify="left" if column == "learner" else "right")
    for i, name in enumerate(result.learners):
        table.add_row(
            name,
            f"{result.pulls[i]:,}",
            f"{result.rewards[i]:,.0f}",
            f"{result.holdout_accuracy[i]:.4f}",
        )
    console.print(table)
    console.print(
        f"live run: cumulative reward {result.cumulative_reward:,.0f} in {budget:,} pulls "
        f"({result.cumulative_reward / budget:.4f} per pull, {elapsed:.2f} s); best learner of "
        f"this run (held-out accuracy): {result.learners[best_live]}, "
        f"{result.rewards[best_live]:,.0f} reward in its {result.pulls[best_live]:,} pulls"
    )
    console.print(
        f"recommended: {data['recommended']} (held-out accuracy "
        f"{data['recommended_accuracy']:.4f}; best {data['best_accuracy']:.4f})"
    )
    if regret is not None:
        console.print(
            f"{REGRET_BASIS}: best fixed learner {regret.best_learner}, V*(T) = "
            f"{regret.optimal_value:,.1f}; expected reward of these pulls "
            f"{regret.collected:,.1f}; regret {regret.regret:,.1f} (the live reward above can "
            "exceed V*(T))"
        )
    else:
        console.print(note)


app.command("imdb")(imdb)
