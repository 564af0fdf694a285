"""``risingbandits explain``: why a policy chose an arm (the CURE-UCB paper's Figure 3 view and
the index terms over time, as PNG, JSON and CSV)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from functools import partial
from operator import methodcaller
from pathlib import Path
from typing import IO, Annotated, Any

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from risingbandits.cli.demo import writable_outputs
from risingbandits.cli.errors import UserError, user_errors
from risingbandits.cli.run import load_instance
from risingbandits.explain import Explanation, explain
from risingbandits.instances import Noise
from risingbandits.instances.families import use_curves_dir
from risingbandits.outputs import atomic_write, writable_dir
from risingbandits.policies import Policy, make_policy, parse_params, policy_class

DEFAULT_POLICIES = ["cure-ucb", "red-ucb"]


def configured_policies(
    names: Sequence[str], preset: str | None, assignments: Sequence[str]
) -> list[Policy]:
    """The policies named, each with ``preset`` and the ``--param NAME=VALUE`` items of the
    parameters it has (an item no given policy has is refused)."""
    if not 1 <= len(names) <= 2:
        raise UserError(f"--policy given {len(names)} times is not allowed: give one or two")
    specs = {name: {p.name for p in policy_class(name).params_spec} for name in names}
    params: dict[str, list[str]] = {name: [] for name in names}
    for item in assignments:
        key = item.partition("=")[0].strip()
        owners = [name for name in names if key in specs[name]]
        if not owners:
            known = "; ".join(f"{n}: {', '.join(sorted(s)) or 'none'}" for n, s in specs.items())
            raise UserError(
                f"--param {item!r} is not allowed: no given policy has {key!r} ({known})"
            )
        for name in owners:
            params[name].append(item)
    return [make_policy(n, preset=preset, **parse_params(n, params[n])) for n in names]


def default_rounds(horizon: int) -> list[int]:
    """An early and a late round, T/10 and 9T/10 (the two stages of the paper's Figure 3)."""
    return sorted({max(1, horizon // 10), max(1, 9 * horizon // 10)})


def write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    def write(f: IO[bytes]) -> None:
        text = io.TextIOWrapper(f, encoding="utf-8", newline="")
        writer = csv.writer(text)
        writer.writerow(header)
        writer.writerows(rows)
        text.flush()
        text.detach()

    atomic_write(path, write)


def write_outputs(ex: Explanation, out: Path) -> list[Path]:
    """figure3.png, terms.png, explain.json, explain.csv and terms-<policy>.csv in ``out``."""
    from risingbandits.plots.explain import plot_stages, plot_terms

    out.mkdir(parents=True, exist_ok=True)
    paths = [plot_stages(ex, out / "figure3.png"), plot_terms(ex, out / "terms.png")]
    payload = json.dumps(ex.to_dict(), indent=1, allow_nan=False)
    # each table whole (temporary file, rename): a run killed while writing one never leaves
    # its first rows under the final name
    atomic_write(out / "explain.json", methodcaller("write", payload.encode("utf-8")))
    write_csv(out / "explain.csv", *ex.table())
    paths += [out / "explain.json", out / "explain.csv"]
    for run in ex.runs:
        header, rows = run.series(ex.instance.arm_names)
        path = out / f"terms-{run.label}.csv"
        fmt = ["%d", "%d"] + ["%.17g"] * (rows.shape[1] - 2)
        atomic_write(
            path,
            partial(
                np.savetxt, X=rows, fmt=fmt, delimiter=",", header=",".join(header), comments=""
            ),
        )
        paths.append(path)
    return paths


def output_paths(out: Path, policies: Sequence[str]) -> list[Path]:
    names = ["figure3.png", "terms.png", "explain.json", "explain.csv"]
    return [out / n for n in names] + [out / f"terms-{p}.csv" for p in policies]


def print_rounds(console: Console, ex: Explanation) -> None:
    """One table per asked round: each policy's view of each arm (N: pulls before round t;
    target: value at pull; limit: N + T - t)."""
    for t in ex.rounds:
        table = Table(title=f"round t = {t:,} of T = {ex.horizon:,} (T - t = {ex.horizon - t:,})")
        for column in ("policy", "arm", "N", "index", "terms", "target", "limit"):
            table.add_column(column)
        for run, view in zip(ex.runs, ex.at(t), strict=True):
            for a in view.arms:
                terms = "\n".join(
                    f"{x:.4g} {n}" for n, x in zip(run.trace.term_names, a.terms, strict=True)
                )
                target = "-" if a.target is None else f"{a.target[1]:.4g}\nat {a.target[0]:,.0f}"
                mark = "\n(chosen)" if a.arm == view.chosen else ""
                table.add_row(
                    view.label,
                    f"{ex.instance.arm_names[a.arm]}{mark}",
                    f"{a.pulls:,}",
                    f"{a.index:.4g}",
                    terms,
                    target,
                    f"{a.horizon_limit:,}",
                )
        console.print(table)


@user_errors
def explain_command(
    policy: Annotated[
        list[str] | None,
        typer.Option(help="Policy name; give one or two (default: cure-ucb and red-ucb)."),
    ] = None,
    instance: Annotated[
        str | None,
        typer.Option(help="Named instance or family member (intro, ltf-v1/0/7, imdb-v1, ...)."),
    ] = None,
    means: Annotated[
        Path | None, typer.Option(help="K x T mean table (.npy, .npz or .csv) instead.")
    ] = None,
    horizon: Annotated[int, typer.Option(help="Horizon T (rounds).")] = 10_000,
    seed: Annotated[int, typer.Option(help="Seed of the run (the same rewards for both).")] = 0,
    round_: Annotated[
        list[int] | None,
        typer.Option(
            "--round", help="Round t in [1, T] to explain (repeatable; default T/10 and 9T/10)."
        ),
    ] = None,
    preset: Annotated[
        str | None, typer.Option(help="Parameter preset of the policies (ltf, concave, imdb).")
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(help="NAME=VALUE for every given policy that has NAME (repeatable)."),
    ] = None,
    noise: Annotated[
        str | None,
        typer.Option(help="gaussian[:SIGMA] | bernoulli | none; default: the instance's own."),
    ] = None,
    curves: Annotated[
        Path | None, typer.Option(help="Folder of the IMDB learning curves for imdb-v1.")
    ] = None,
    allow_decreasing: Annotated[
        bool, typer.Option(help="Accept a --means table that decreases (real learning curves).")
    ] = False,
    trace_every: Annotated[
        int, typer.Option(help="Record the index every k-th round (rounds 1 + k j).")
    ] = 1,
    out: Annotated[Path, typer.Option(help="Output directory.")] = Path("risingbandits-explain"),
    overwrite: Annotated[bool, typer.Option(help="Replace existing output files.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the numbers as JSON.")] = False,
) -> None:
    """Why a policy chose an arm: each arm's curve so far, each policy's target point and the
    horizon limit at rounds t (the paper's Figure 3), and the index terms over the run."""
    names = policy or DEFAULT_POLICIES
    policies = configured_policies(names, preset, param or [])
    if curves is not None:
        use_curves_dir(curves)
    noise_model = Noise.parse(noise) if noise is not None else None
    inst = load_instance(instance, means, horizon, noise_model, allow_decreasing)
    rounds = round_ or default_rounds(horizon)
    writable_outputs(output_paths(out, names), overwrite)
    ex = explain(inst, policies, horizon, seed, rounds, trace_every=trace_every)
    writable_dir(out)  # a file in the way, no permission: one line (made once the rounds pass)
    paths = write_outputs(ex, out)
    if as_json:
        typer.echo(json.dumps({**ex.to_dict(), "files": [str(p) for p in paths]}))
        return
    console = Console(soft_wrap=True)
    print_rounds(console, ex)
    regrets = ", ".join(f"{run.label} {run.regret:,.1f}" for run in ex.runs)
    console.print(f"policy regret of these runs: {regrets}")
    console.print(f"wrote {', '.join(str(p) for p in paths)}")
