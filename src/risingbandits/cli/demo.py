"""``risingbandits demo``: the paper's Figure 1 (intro instance, regret vs horizon)."""

from __future__ import annotations

import json
from operator import methodcaller
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from risingbandits.analysis import MeanCI, finite_or_none, mean_ci
from risingbandits.cli.errors import UserError, user_errors
from risingbandits.cli.progress import bar_task, progress_bar
from risingbandits.instances import Noise, intro
from risingbandits.outputs import atomic_write, writable_dir
from risingbandits.policies import POLICIES, make_policy
from risingbandits.simulate import check_seed_memory, simulate_horizons

# Figure 1 compares these three; UCB1 is shown as a classic stationary reference.
DEMO_POLICIES = ("cure-ucb", "red-ucb", "sw-ucb", "ucb1")
DEMO_HORIZONS = tuple(range(5_000, 50_001, 5_000))


def writable_outputs(paths: list[Path], overwrite: bool) -> None:
    """Refuse to replace existing files unless the user said so, and a folder in the way of a
    file whatever they said (before any computing: the results would be lost)."""
    for path in paths:
        if path.is_dir():
            raise UserError(
                f"--out={str(path.parent)!r} is not allowed: {path} is a folder where the demo "
                "writes a file; move it or choose another --out"
            )
    existing = [p for p in paths if p.exists()]
    if existing and not overwrite:
        raise UserError(
            f"{existing[0]} already exists: pass --overwrite to replace it or choose another --out"
        )


def _earlier_demo(table_path: Path, settings: dict[str, Any]) -> dict[str, Any] | None:
    """The table of an earlier demo in the same folder with the same settings, if any."""
    try:
        old = json.loads(table_path.read_text())
    except (OSError, ValueError, RecursionError):  # RecursionError: deeply nested JSON
        return None
    same = isinstance(old, dict) and all(old.get(k) == v for k, v in settings.items())
    return old if same else None


@user_errors
def demo(
    out: Annotated[Path, typer.Option(help="Output directory.")] = Path("risingbandits-demo"),
    seeds: Annotated[int, typer.Option(help="Seeds per horizon.")] = 20,
    noise: Annotated[
        str, typer.Option(help="gaussian[:SIGMA] | bernoulli | none.")
    ] = "gaussian:0.1",
    overwrite: Annotated[bool, typer.Option(help="Replace existing output files.")] = False,
) -> None:
    """Figure 1: CURE-UCB against the available baselines on the intro instance, T = 5k..50k."""
    if seeds < 1:
        raise UserError(f"--seeds={seeds} is not allowed: use an integer >= 1")
    check_seed_memory(seeds)  # before --out is made
    from risingbandits.plots.intro import plot_figure1

    png, table_path = out / "figure1.png", out / "figure1.json"
    instance = intro(max(DEMO_HORIZONS), Noise.parse(noise))
    policies = [
        make_policy(name, preset="ltf" if POLICIES[name].presets else None)
        for name in DEMO_POLICIES
        if name in POLICIES
    ]
    settings = json.loads(
        json.dumps(
            {
                "instance": "intro",
                "noise": str(instance.noise),
                "seeds": seeds,
                "policies": {p.name: p.params for p in policies},
            }
        )
    )
    writable_dir(out)  # before anything is read from it, and before any computing
    # Running the demo again with the same settings is safe: seeded, it gives the same table,
    # which is checked before anything is replaced.
    earlier = None if overwrite or not png.is_file() else _earlier_demo(table_path, settings)
    if earlier is None:
        writable_outputs([png, table_path], overwrite)
    curves: dict[str, dict[int, MeanCI]] = {}
    console = Console()
    with progress_bar(console) as bar:
        for pol in policies:
            advance = bar_task(bar, pol.name)
            results = simulate_horizons(instance, pol, DEMO_HORIZONS, seeds, progress=advance)
            curves[pol.name] = {h: mean_ci(r.regret) for h, r in results.items()}

    table = Table(title=f"Policy regret on the intro instance (mean ± 95% CI, {seeds} seeds)")
    table.add_column("T", justify="right")
    for name in curves:
        table.add_column(name, justify="right")
    for h in DEMO_HORIZONS:
        cells = []
        for name in curves:
            ci = curves[name][h]
            cells.append(
                f"{ci.mean:,.0f} ± {ci.half_width:,.0f}" if ci.n > 1 else f"{ci.mean:,.0f}"
            )
        table.add_row(f"{h:,}", *cells)
    console.print(table)

    payload = {
        **settings,
        "switching_horizons": [s.horizon for s in instance.oracle.switching_horizons()],
        "regret": {
            name: {
                str(h): {"mean": c.mean, "ci95": [finite_or_none(c.low), finite_or_none(c.high)]}
                for h, c in by_t.items()
            }
            for name, by_t in curves.items()
        },
    }
    text = json.dumps(payload, indent=2, allow_nan=False)
    if earlier is not None and earlier != json.loads(text):
        raise UserError(
            f"{table_path} holds other numbers for the same settings (another version of "
            "risingbandits?): pass --overwrite to replace it or choose another --out"
        )
    plot_figure1(instance, curves, png)
    atomic_write(table_path, methodcaller("write", text.encode("utf-8")))
    again = " (the same numbers as the earlier demo there)" if earlier is not None else ""
    console.print(f"wrote {png} and {table_path}{again}")
