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
from risingbandits.instances.named import instance_names, named_full_horizon, named_instance
from risingbandits.policies import POLICIES, make_policy, parse_params
from risingbandits.simulate import SimulationResult, simulate
from risingbandits.simulate_budget import BudgetResult, simulate_budget

DEFAULT_HORIZON = 10_000
"""T when ``--horizon`` is not given and the instance has no whole table of its own (lcdb-v1
and live-v1 instances run to where their curves end)."""


def load_instance(
    instance: str | None,
    means: Path | None,
    horizon: int,
    noise: Noise | None,
    allow_decreasing: bool,
    costs: Path | None = None,
) -> RisingInstance:
    """The instance named by ``--instance`` or read from ``--means`` (noise None: its default),
    with the costs per pull of ``--costs`` (a ``--means`` table only: one column, a cost per
    arm, or the table's shape)."""
    if instance and means:
        raise UserError("use either --instance NAME or --means FILE, not both")
    if costs is not None and means is None:
        raise UserError(
            "--costs goes with --means FILE: a named instance carries its own costs "
            "(lcdb-v1, live-v1) or costs 1 per pull"
        )
    if means is not None:
        table, names = read_means_file(means)
        cost_table = None
        if costs is not None:
            cost_table, _ = read_means_file(costs, "costs")
            if cost_table.ndim == 2 and cost_table.shape[1] == 1:
                cost_table = cost_table[:, 0]  # one column: a cost per arm
        return from_means(
            table,
            noise,
            name=means.name,
            arm_names=names,
            require_rising=not allow_decreasing,
            costs=cost_table,
        )
    return named_instance(instance or "intro", horizon, noise)


def sigma_used(params: dict[str, Any], inst: RisingInstance) -> float | None:
    """The sigma the policy ran with: ``"auto"`` is the instance's noise proxy (None when the
    policy has no sigma, or estimates it online from the rewards: ``"estimate"``, the default
    of ACE-UCB and HACE-UCB, one value per run and step)."""
    sigma = params.get("sigma")
    if sigma is None or sigma == "estimate":
        return None
    return inst.noise.proxy if sigma == "auto" else float(sigma)


def per_seed(name: str, values: np.ndarray) -> dict[str, Any]:
    """``NAME_mean``, ``NAME_ci95`` (a 95% t-interval) and ``NAME_per_seed`` of one result."""
    ci = mean_ci(values)
    return {
        f"{name}_mean": ci.mean,
        f"{name}_ci95": [finite_or_none(ci.low), finite_or_none(ci.high)],
        f"{name}_per_seed": values.tolist(),
    }


def run_fields(res: SimulationResult | BudgetResult, inst: RisingInstance) -> dict[str, Any]:
    """What both ``--json`` objects say about the run: instance, policy (``sigma_used``: see
    :func:`sigma_used`), horizon, seeds."""
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
        "noise": str(inst.noise),
        "seeds": [int(s) for s in res.seeds],
    }


def outcome_fields(res: SimulationResult | BudgetResult, inst: RisingInstance) -> dict[str, Any]:
    """What both ``--json`` objects say about the deployed models: the final-model gap (on the
    test curves when the instance has them), the recommended arms, the pulls per arm."""
    return {
        **per_seed("final_gap", res.final_gap),
        "final_gap_on": "test" if inst.test_means is not None else "means",
        "recommended": res.recommended.tolist(),
        "pulls_mean": res.pulls_mean.tolist(),
    }


def result_json(res: SimulationResult, inst: RisingInstance, elapsed: float) -> dict[str, Any]:
    """The ``--json`` object of ``risingbandits run``."""
    return {
        **run_fields(res, inst),
        **per_seed("regret", res.regret),
        "reward_mean": float(res.reward.mean()),
        "reward_per_seed": res.reward.tolist(),
        **outcome_fields(res, inst),
        "best_arm": res.best_arm,
        "optimal_value": res.optimal_value,
        "elapsed_s": round(elapsed, 4),
    }


def budget_json(res: BudgetResult, inst: RisingInstance, elapsed: float) -> dict[str, Any]:
    """The ``--json`` object of ``risingbandits run --budget`` (:class:`BudgetResult`)."""
    return {
        **run_fields(res, inst),
        "budget": res.budget,
        "budget_kind": res.budget_kind,
        "workers": res.workers,
        **outcome_fields(res, inst),
        "best_reachable": res.best_reachable,
        **per_seed("cost_regret", res.cost_regret),
        "reach": res.reach.tolist(),
        "spent_mean": float(res.spent.mean()),
        "wall_time_mean": float(res.wall_time.mean()),
        "idle_mean_per_worker": res.idle.mean(axis=0).tolist(),
        "elapsed_s": round(elapsed, 4),
    }


def _interval(bounds: list[float | None], digits: int) -> str:
    """``± half-width  (95% CI [low, high])`` of a ``*_ci95`` pair."""
    low, high = bounds
    if low is None or high is None:
        return "(one seed: no interval)"
    f = f",.{digits}f"
    return f"± {(high - low) / 2:{f}}  (95% CI [{low:{f}}, {high:{f}}])"


def _print_outcome(console: Console, data: dict[str, Any]) -> None:
    """The lines both outputs share: the deployed arm and the pulls per arm."""
    names = data["arm_names"]
    recommended = np.bincount(data["recommended"], minlength=data["n_arms"])
    top = int(np.argmax(recommended))
    console.print(
        f"recommended     arm {top} ({names[top]}) in {recommended[top]} of "
        f"{len(data['recommended'])} seeds (the arm each run would deploy)"
    )
    pulls = "   ".join(f"{i} ({names[i]}): {p:,.1f}" for i, p in enumerate(data["pulls_mean"]))
    console.print(f"pulls per arm   {pulls}")


def _print_header(console: Console, data: dict[str, Any]) -> None:
    """The first line of both outputs: the policy, its parameters, the instance."""
    shown = dict(data["params"])
    if shown.get("sigma") == "auto":
        shown["sigma"] = f"auto ({data['sigma_used']:g} used)"
    params = ", ".join(f"{k}={v}" for k, v in shown.items()) or "no parameters"
    tag = "  [reconstruction]" if data["reconstruction"] else ""
    console.print(
        f"[bold]{data['policy']}[/bold] ({params}){tag} on [bold]{data['instance']}[/bold] "
        f"({data['n_arms']} arms, noise {data['noise']})"
    )


def _print_human(console: Console, data: dict[str, Any]) -> None:
    names = data["arm_names"]
    _print_header(console, data)
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
    console.print(f"realised reward {data['reward_mean']:,.2f} (mean over seeds)")
    _print_outcome(console, data)


def _print_budget(console: Console, data: dict[str, Any]) -> None:
    what = "wall-clock deadline" if data["budget_kind"] == "deadline" else "total cost"
    _print_header(console, data)
    console.print(
        f"budget {data['budget']:,.4g} ({what}), {data['workers']} worker(s)   "
        f"seeds = {len(data['seeds'])}   most pulls the budget buys: {data['horizon']:,}"
    )
    console.print(
        f"final gap       {data['final_gap_mean']:.4f} {_interval(data['final_gap_ci95'], 4)}  "
        f"against {data['best_reachable']:.4f}, the best value one candidate alone reaches"
    )
    console.print(
        f"cost regret     {data['cost_regret_mean']:,.2f} {_interval(data['cost_regret_ci95'], 1)}"
    )
    idle = ", ".join(f"{x:,.4g}" for x in data["idle_mean_per_worker"])
    console.print(
        f"wall time       {data['wall_time_mean']:,.4g}   spent {data['spent_mean']:,.4g}   "
        f"idle per worker {idle} (means over seeds)"
    )
    _print_outcome(console, data)


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
    horizon: Annotated[
        int | None,
        typer.Option(
            help="Horizon T (rounds); default 10,000, or the instance's whole table where it "
            "has one (lcdb-v1, live-v1)."
        ),
    ] = None,
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
    costs: Annotated[
        Path | None,
        typer.Option(
            help="Cost of each pull for a --means table (.npy, .npz or .csv): one column (a "
            "cost per arm) or the table's shape."
        ),
    ] = None,
    budget: Annotated[
        float | None,
        typer.Option(
            help="A budget in cost instead of T steps (seconds on lcdb-v1 and live-v1): the "
            "event-driven simulator; --horizon is then the length of the instance's table."
        ),
    ] = None,
    workers: Annotated[
        int, typer.Option(help="Workers training at once (with --budget).", min=1)
    ] = 1,
    budget_kind: Annotated[
        str,
        typer.Option(help="deadline (wall clock, W workers in parallel) | total (cost summed)."),
    ] = "deadline",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Simulate one policy on one instance for several seeds: regret and final-model gap ± 95%
    CI, the recommended arm, pulls per arm. With --budget: a budget in cost, W workers
    (``rb.simulate_budget``): final-model gap at the deadline, regret in cost, wall and idle
    time."""
    if seeds < 1:
        raise UserError(f"--seeds={seeds} is not allowed: use an integer >= 1")
    if budget is None and (workers != 1 or budget_kind != "deadline" or costs is not None):
        raise UserError(
            "--workers, --budget-kind and --costs go with --budget (a budget in cost): without "
            "it the run counts pulls"
        )
    if curves is not None:
        use_curves_dir(curves)
    noise_model = Noise.parse(noise) if noise is not None else None
    if horizon is None:
        full = named_full_horizon(instance) if instance else None
        horizon = DEFAULT_HORIZON if full is None else full
    inst = load_instance(instance, means, horizon, noise_model, allow_decreasing, costs)
    pol = make_policy(policy, preset=preset, **parse_params(policy, param or []))
    console = Console(stderr=True)
    start = time.perf_counter()
    if budget is not None:
        kind: Any = budget_kind  # checked by simulate_budget (one line naming the value)
        spent = simulate_budget(inst, pol, budget, seeds, workers=workers, budget_kind=kind)
        data = budget_json(spent, inst, time.perf_counter() - start)
        if as_json:
            typer.echo(json.dumps(data))
        else:
            _print_budget(Console(soft_wrap=True), data)
        return
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
