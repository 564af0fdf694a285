"""``risingbandits select``: a rising-bandit policy drives K shell commands, one step per call."""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from risingbandits.cli.errors import UserError, user_errors
from risingbandits.cli.progress import progress_bar
from risingbandits.cli.signals import interruption
from risingbandits.integrations.shell import (
    Step,
    load_run,
    lock_checkpoint,
    parse_number,
    run_commands,
    summary,
)
from risingbandits.modelselect import DEFAULT_POLICY, ModelSelector
from risingbandits.policies import parse_params


def _score_range(text: str | None) -> tuple[float, float] | None:
    """``LOW,HIGH``: two finite plain numbers, LOW < HIGH (refused naming the option)."""
    if text is None:
        return None
    parts = [parse_number(part) for part in text.split(",")]
    numbers = [x for x in parts if x is not None and math.isfinite(x)]
    if len(parts) != 2 or len(numbers) != 2:
        raise UserError(f"--score-range={text!r} is not allowed: use LOW,HIGH (e.g. 0,100)")
    low, high = numbers
    if not low < high:
        raise UserError(f"--score-range={text!r} is not allowed: LOW must be below HIGH")
    return low, high


def _selector(
    commands: list[str],
    names: list[str] | None,
    budget: int,
    policy: str,
    preset: str | None,
    params: dict[str, Any],
    seed: int,
    score_range: tuple[float, float] | None,
    checkpoint: Path | None,
) -> ModelSelector:
    """A new selector, or the one in ``checkpoint`` (same policy; its budget set to ``budget``)."""
    if names is not None and len(names) != len(commands):
        raise UserError(
            f"--name was given {len(names)} times for {len(commands)} commands: give one name "
            "per command, or none"
        )
    fresh = ModelSelector(
        names or len(commands),
        budget,
        policy,
        preset=preset,
        params=params,
        score_range=score_range,
        seed=seed,
    )
    if checkpoint is None or not checkpoint.exists():
        return fresh
    selector = load_run(checkpoint, commands)
    for what, saved, given in [
        ("policy", selector.policy, fresh.policy),
        ("candidates", selector.names, fresh.names),
    ]:
        if saved != given:
            raise UserError(
                f"--checkpoint {str(checkpoint)!r} holds a run with {what} {saved}, not {given}:"
                " resume with the same options, or give another file"
            )
    if budget != selector.budget:
        selector.set_budget(budget)
    return selector


@contextlib.contextmanager
def _budget_fits(budget: int) -> Iterator[None]:
    """A budget whose policy state cannot be allocated is refused in one line."""
    try:
        yield
    except MemoryError as exc:
        raise UserError(
            f"--budget {budget} cannot be served: the policy's state does not fit in memory "
            f"({exc}): give a smaller --budget"
        ) from None


def _run(
    selector: ModelSelector,
    commands: list[str],
    workers: int,
    timeout: float | None,
    checkpoint: Path | None,
    quiet: bool,
) -> None:
    """Spend the budget under a progress bar. Ctrl-C, SIGTERM or SIGHUP end the commands, say
    how many scores the checkpoint keeps and exit with 128 + the signal, like ``sweep``."""
    try:
        with progress_bar(disable=quiet) as bar:
            label = f"{selector.policy['policy']} steps"
            task = bar.add_task(label, total=selector.budget, completed=selector.t)

            def on_step(step: Step) -> None:
                bar.update(task, completed=selector.t)

            run_commands(
                selector,
                commands,
                workers=workers,
                checkpoint=checkpoint,
                timeout=timeout,
                on_step=on_step,
            )
    except KeyboardInterrupt as exc:
        what, code = interruption(exc)
        kept = f"; {selector.t} scores kept in {str(checkpoint)!r}" if checkpoint else ""
        typer.echo(f"{what}: the commands were ended{kept}", err=True)
        raise typer.Exit(code) from None


def _print(console: Console, data: dict[str, Any]) -> None:
    table = Table("candidate", "steps", "last score", "command")
    for name, command in data["commands"].items():
        score = data["last_scores"][name]
        shown = "-" if score is None else f"{score:.4g}"
        table.add_row(name, str(data["pulls"][name]), shown, command)
    console.print(table)
    console.print(
        f"recommended: [bold]{data['recommended']}[/bold] (last score "
        f"{data['recommended_score']:.4g}; best last score {data['best_last_score']:.4g})"
    )


@user_errors
def select(
    commands: Annotated[
        list[str], typer.Argument(help="One shell command per candidate (quote each).")
    ],
    budget: Annotated[int, typer.Option(help="Training steps (command calls) in total.")],
    name: Annotated[
        list[str] | None, typer.Option(help="Name of each candidate, in order (repeatable).")
    ] = None,
    policy: Annotated[
        str, typer.Option(help="Policy (see `risingbandits list`).")
    ] = DEFAULT_POLICY,
    preset: Annotated[str | None, typer.Option(help="Parameter preset of the policy.")] = None,
    param: Annotated[
        list[str] | None, typer.Option(help="Policy parameter NAME=VALUE (repeatable).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the policy's own randomness.")] = 0,
    workers: Annotated[int, typer.Option(help="Commands running at once.")] = 1,
    score_range: Annotated[
        str | None, typer.Option(help="LOW,HIGH of the scores (default 0,1).")
    ] = None,
    checkpoint: Annotated[
        Path | None,
        typer.Option(
            help="Save after every score; an existing file is resumed (one run at a time)."
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(help="Seconds a call may run; a longer one is ended and stops the run."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Run K commands, each training its candidate one step per call and printing its score on
    its last line; the policy picks which command runs next, until BUDGET calls are spent."""
    if len(commands) < 2:
        raise UserError(f"{len(commands)} command is not allowed: give two or more")
    with lock_checkpoint(checkpoint):  # before it is read: a second run is refused at once
        with _budget_fits(budget):
            selector = _selector(
                commands,
                name,
                budget,
                policy,
                preset,
                parse_params(policy, param or []),
                seed,
                _score_range(score_range),
                checkpoint,
            )
        _run(selector, commands, workers, timeout, checkpoint, as_json)
    data = dict(summary(selector, commands))
    if as_json:
        typer.echo(json.dumps(data))
    else:
        _print(Console(), data)
