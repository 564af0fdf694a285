"""``risingbandits run`` and ``risingbandits list``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.console import Console

from risingbandits.analysis import finite_or_none, mean_ci
from risingbandits.cli.errors import UserError, user_errors
from risingbandits.cli.progress import bar_task, progress_bar
from risingbandits.instances import Noise, RisingInstance, from_means, read_means_file
from risingbandits.instances.families import use_curves_dir
from risingbandits.instances.named import instance_names, named_instance
from risingbandits.policies import POLICIES, make_policy, parse_params
from risingbandits.simulate import SimulationResult, simulate


def load_instance(
    instance: str | None,
    means: Path | None,
    horizon: int,
    noise: Noise | None,
    allow_decreasing: bool,
) -> RisingInstance:
    """The instance named by ``--instance`` or read from ``--means`` (noise None: its default)."""
    if instance and means:
        raise UserError("use either --instance NAME or --means FILE, not both")
    if means is not None:
        table, names = read_means_file(means)
        return from_means(
            table, noise, name=means.name, arm_names=names, require_rising=not allow_decreasing
        )
    return named_instance(instance or "intro", horizon, noise)


def sigma_used(params: dict[str, Any], inst: RisingInstance) -> float | None:
    """The sigma the policy ran with: ``"auto"`` is the instance's noise proxy (None when the
    policy has no sigma)."""
    sigma = params.get("sigma")
    if sigma is None:
        return None
    return inst.noise.proxy if sigma == "auto" else float(sigma)


def result_json(res: SimulationResult, inst: RisingInstance, elapsed: float) -> dict[str, Any]:
    """The ``--json`` object of ``risingbandits run`` (``sigma_used``: see :func:`sigma_used`)."""
    ci = mean_ci(res.regret)
    gap = mean_ci(res.final_gap)
    policy = make_policy(res.policy["policy"], **res.policy["params"])
    used = sigma_used(res.policy["params"], inst)
    return {
        "instance": res.instance,
        "n_arms": inst.n_arms,
        "arm_names": list(inst.arm_names),
        "policy": res.policy["policy"],
        "params": res.policy["params"],
        **({} if used is None else {"sigma_used": used}),
        "uses_horizon": policy.uses_horizon,
        "reconstruction": policy.reconstruction,
        "horizon": res.horizon,
        "noise": res.noise,
        "seeds": [int(s) for s in res.seeds],
        "regret_mean": ci.mean,
        "regret_ci95": [finite_or_none(ci.low), finite_or_none(ci.high)],
        "regret_per_seed": res.regret.tolist(),
        "reward_mean": float(res.reward.mean()),
        "reward_per_seed": res.reward.tolist(),
        "final_gap_mean": gap.mean,
        "final_gap_ci95": [finite_or_none(gap.low), finite_or_none(gap.high)],
        "final_gap_per_seed": res.final_gap.tolist(),
        "final_gap_on": "test" if inst.test_means is not None else "means",
        "recommended": res.recommended.tolist(),
        "pulls_mean": res.pulls_mean.tolist(),
        "best_arm": res.best_arm,
        "optimal_value": res.optimal_value,
        "elapsed_s": round(elapsed, 4),
    }


def _interval(bounds: list[float | None], digits: int) -> str:
    """``± half-width  (95% CI [low, high])`` of a ``*_ci95`` pair."""
    low, high = bounds
    if low is None or high is None:
        return "(one seed: no interval)"
    f = f",.{digits}f"
    return f"± {(high - low) / 2:{f}}  (95% CI [{low:{f}}, {high:{f}}])"


def _print_human(console: Console, data: dict[str, Any]) -> None:
    names = data["arm_names"]
    shown = dict(data["params"])
    if shown.get("sigma") == "auto":
        shown["sigma"] = f"auto ({data['sigma_used']:g} used)"
    params = ", ".join(f"{k}={v}" for k, v in shown.items()) or "no parameters"
    tag = "  [reconstruction]" if data["reconstruction"] else ""
    console.print(
        f"[bold]{data['policy']}[/bold] ({params}){tag} on [bold]{data['instance']}[/bold] "
        f"({data['n_arms']} arms, noise {data['noise']})"
    )
    console.print(
        f"horizon T = {data['horizon']:,}   seeds = {len(data['seeds'])}   "
        f"V*(T) = {data['optimal_value']:,.2f}   best fixed arm: {data['best_arm']} "
        f"({names[data['best_arm']]})"
    )
    console.print(f"regret          {data['regret_mean']:,.2f} {_interval(data['regret_ci95'], 1)}")
    console.print(
        f"final gap       {data['final_gap_mean']:.4f} {_interval(data['final_gap_ci95'], 4)}  "
        + (
            "max_i test_i(T) - test_rec(N_rec), on the test curves"
            if data["final_gap_on"] == "test"
            else "max_i mu_i(T) - mu_rec(N_rec)"
        )
    )
    recommended = np.bincount(data["recommended"], minlength=data["n_arms"])
    top = int(np.argmax(recommended))
    console.print(
        f"recommended     arm {top} ({names[top]}) in {recommended[top]} of "
        f"{len(data['recommended'])} seeds (the arm each run would deploy)"
    )
    console.print(f"realised reward {data['reward_mean']:,.2f} (mean over seeds)")
    pulls = "   ".join(f"{i} ({names[i]}): {p:,.1f}" for i, p in enumerate(data["pulls_mean"]))
    console.print(f"pulls per arm   {pulls}")


@user_errors
def run(
    policy: Annotated[
        str, typer.Option(help="Policy name (see `risingbandits list`).")
    ] = "cure-ucb",
    instance: Annotated[
        str | None, typer.Option(help="Named instance (see `risingbandits list`); default intro.")
    ] = None,
    means: Annotated[
        Path | None,
        typer.Option(help="K x T mean table (.npy, .npz or .csv) instead of --instance."),
    ] = None,
    horizon: Annotated[int, typer.Option(help="Horizon T (rounds).")] = 10_000,
    seeds: Annotated[int, typer.Option(help="Number of seeds (0..N-1).")] = 20,
    noise: Annotated[
        str | None,
        typer.Option(
            help="gaussian[:SIGMA] | bernoulli | none; default: the instance's own "
            "(gaussian:0.1 for synthetic instances and tables, bernoulli for imdb-v1)."
        ),
    ] = None,
    param: Annotated[
        list[str] | None, typer.Option(help="Policy parameter NAME=VALUE (repeatable).")
    ] = None,
    preset: Annotated[
        str | None, typer.Option(help="Named parameter preset of the policy (ltf, concave, imdb).")
    ] = None,
    curves: Annotated[
        Path | None,
        typer.Option(help="Folder of the IMDB learning curves for --instance imdb-v1."),
    ] = None,
    allow_decreasing: Annotated[
        bool, typer.Option(help="Accept a --means table that decreases (real learning curves).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Simulate one policy on one instance for several seeds: regret and final-model gap ± 95%
    CI, the recommended arm, pulls per arm."""
    if seeds < 1:
        raise UserError(f"--seeds={seeds} is not allowed: use an integer >= 1")
    if curves is not None:
        use_curves_dir(curves)
    noise_model = Noise.parse(noise) if noise is not None else None
    inst = load_instance(instance, means, horizon, noise_model, allow_decreasing)
    pol = make_policy(policy, preset=preset, **parse_params(policy, param or []))
    console = Console(stderr=True)
    start = time.perf_counter()
    if as_json or seeds == 1:
        res = simulate(inst, pol, horizon, seeds)
    else:
        with progress_bar(console) as bar:
            res = simulate(
                inst, pol, horizon, seeds, progress=bar_task(bar, f"{policy} seeds", seeds)
            )
    data = result_json(res, inst, time.perf_counter() - start)
    if as_json:
        typer.echo(json.dumps(data))
    else:
        _print_human(Console(soft_wrap=True), data)


def list_items() -> None:
    """Policies and instances, one line each."""
    for name, cls in POLICIES.items():
        horizon = "uses T" if cls().uses_horizon else "horizon-free"
        typer.echo(f"policy    {name:<18} {cls.summary} [{horizon}]")
    for name, summary in instance_names():
        typer.echo(f"instance  {name:<24} {summary}")
