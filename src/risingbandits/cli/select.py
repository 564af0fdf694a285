"""``risingbandits select``: a rising-bandit policy drives K shell commands, one step per call.

The budget is ``--budget`` calls, or ``--deadline``: seconds from the command's start (the
process's, so loading Python and its libraries counts), or a clock time (``17:30``: the next
time the clock shows it, today or else tomorrow, with a notice on stderr when it is tomorrow; or
an ISO 8601 date and time, local unless it gives its offset). A deadline is a budget in seconds
of training (``ModelSelector(..., cost="seconds")``): the time until it, times the workers that
can run at once (at most one per command), and no call starts once the clock has passed it; the
calls running then finish, so the run may end a call's length after it. A deadline that passes
before any call started is an error (exit code 1). On resume with a checkpoint, the budget
becomes the seconds spent so far plus the new deadline's.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from risingbandits.cli.errors import UserError, fail, user_errors
from risingbandits.cli.progress import progress_bar
from risingbandits.cli.signals import interruption
from risingbandits.experiments.watchdog import ProcessIdentity
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


def _started_ago(pid: int | None = None) -> float:
    """Seconds since process ``pid`` (this one by default) started: its start time in clock
    ticks since boot (:class:`~risingbandits.experiments.watchdog.ProcessIdentity`) against the
    boot clock; 0.0 where that cannot be read (no /proc, or not Linux)."""
    start = ProcessIdentity.of(os.getpid() if pid is None else pid).start
    if start is None:
        return 0.0
    try:
        since_boot = int(start) / os.sysconf("SC_CLK_TCK")
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - since_boot)
    except (ValueError, OSError, AttributeError):  # no boot clock, no clock-tick rate
        return 0.0


def _seconds_until(text: str, now: dt.datetime, ago: float = 0.0) -> float:
    """``--deadline`` as seconds from ``now`` (an aware local time): a plain number of seconds
    > 0 from the command's start, ``ago`` seconds before ``now``, or a clock time (module
    docstring) still to come."""
    seconds = parse_number(text)
    if seconds is None:
        seconds = (_instant(text, now) - now).total_seconds()
    elif 0 < seconds <= ago:
        raise UserError(
            f"--deadline={text!r} is not allowed: it has passed (seconds count from the "
            f"command's start, {ago:.1f} s ago); give more seconds"
        )
    else:
        seconds -= ago
    if not (math.isfinite(seconds) and seconds > 0):
        raise UserError(
            f"--deadline={text!r} is not allowed: give a finite number of seconds > 0 or a time "
            "still to come"
        )
    return seconds


def _instant(text: str, now: dt.datetime) -> dt.datetime:
    """A clock time ``HH:MM[:SS]`` (its next occurrence from ``now``; a notice on stderr when
    that is tomorrow) or an ISO 8601 date and time (local time unless it gives its offset)."""
    try:
        clock = dt.time.fromisoformat(text)
    except ValueError:
        clock = None
    if clock is not None:
        day = now.astimezone(clock.tzinfo).date() if clock.tzinfo else now.date()
        when = dt.datetime.combine(day, clock).astimezone()
        if when > now:
            return when
        shown = f"{day + dt.timedelta(days=1)} {clock.isoformat(_timespec(clock))}"
        typer.echo(
            f"risingbandits: --deadline {text} is taken as {shown} (tomorrow): the clock passed "
            "it today; give seconds or a date and time for another deadline",
            err=True,
        )
        return when + dt.timedelta(days=1)
    try:
        return dt.datetime.fromisoformat(text).astimezone()
    except ValueError:
        raise UserError(
            f"--deadline={text!r} is not allowed: use seconds (e.g. 3600), a clock time (17:30) "
            "or an ISO 8601 date and time (2030-01-31T17:30)"
        ) from None


def _timespec(clock: dt.time) -> str:
    """The precision a clock time is shown with: minutes unless it has seconds."""
    return "auto" if clock.second or clock.microsecond else "minutes"


ONE_BUDGET = (
    "give --budget (calls in total) or --deadline (seconds or a clock time), one of the two"
)


NO_CALL = (
    "no call started: the deadline passed first (a machine's first run compiles the policy's "
    "kernels, about 30 s for HACE-UCB); give a later --deadline"
)


def _budget(
    budget: int | None, deadline: str | None, workers: int, k: int
) -> tuple[float, float | None]:
    """The selector's budget and the seconds until the deadline from now (None with
    ``--budget``; seconds given count from the process's start): a deadline buys its seconds on
    each worker that can run at once (one per command at most)."""
    if deadline is None:
        if budget is None:
            raise UserError(ONE_BUDGET)
        return budget, None
    if budget is not None:
        raise UserError(ONE_BUDGET)
    until = _seconds_until(deadline, dt.datetime.now().astimezone(), _started_ago())
    return until * max(1, min(workers, k)), until


def _selector(
    commands: list[str],
    names: list[str] | None,
    budget: float,
    cost: str,
    policy: str,
    preset: str | None,
    params: dict[str, Any],
    seed: int,
    score_range: tuple[float, float] | None,
    checkpoint: Path | None,
) -> ModelSelector:
    """A new selector, or the one in ``checkpoint`` (same policy; its budget set to ``budget``,
    or in seconds to those spent plus ``budget``)."""
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
        cost=cost,
    )
    if checkpoint is None or not checkpoint.exists():
        return fresh
    selector = load_run(checkpoint, commands)
    for what, saved, given in [
        ("policy", selector.policy, fresh.policy),
        ("candidates", selector.names, fresh.names),
        ("budget in", selector.cost, fresh.cost),
    ]:
        if saved != given:
            raise UserError(
                f"--checkpoint {str(checkpoint)!r} holds a run with {what} {saved}, not {given}:"
                " resume with the same options, or give another file"
            )
    if cost == "seconds":
        selector.set_budget(selector.spent + budget)
    elif budget != selector.budget:
        selector.set_budget(budget)
    return selector


@contextlib.contextmanager
def _budget_fits(budget: float) -> Iterator[None]:
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
    end: float | None,
) -> None:
    """Spend the budget under a progress bar. Ctrl-C, SIGTERM or SIGHUP end the commands, say
    how many scores the checkpoint keeps and exit with 128 + the signal, like ``sweep``. With a
    deadline (``end`` on the monotonic clock) no call starts once it has passed, and the budget
    becomes the seconds spent; if no call started at all, one line says so (exit code 1)."""
    try:
        with progress_bar(disable=quiet) as bar:
            unit = "steps" if end is None else "seconds"
            label = f"{selector.policy['policy']} {unit}"
            task = bar.add_task(label, total=selector.budget, completed=int(selector.spent))

            def on_step(step: Step) -> None:
                bar.update(task, completed=selector.spent)

            run_commands(
                selector,
                commands,
                workers=workers,
                checkpoint=checkpoint,
                timeout=timeout,
                deadline=None if end is None else max(0.0, end - time.monotonic()),
                on_step=on_step,
            )
            if end is not None and 0 < selector.spent < selector.budget:
                selector.set_budget(selector.spent)  # the deadline passed first
                bar.update(task, total=selector.budget, completed=selector.spent)
        if end is not None and selector.t == 0:
            fail(NO_CALL, code=1)  # the run could not do its work: not a success for scripts
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
    if data["recommended_score"] is None:
        console.print("recommended: none (no score yet)")
        return
    console.print(
        f"recommended: [bold]{data['recommended']}[/bold] (last score "
        f"{data['recommended_score']:.4g}; best last score {data['best_last_score']:.4g})"
    )


@user_errors
def select(
    commands: Annotated[
        list[str], typer.Argument(help="One shell command per candidate (quote each).")
    ],
    budget: Annotated[
        int | None, typer.Option(help="Training steps (command calls) in total.")
    ] = None,
    deadline: Annotated[
        str | None,
        typer.Option(
            help="Instead of --budget: seconds from the start, or a clock time (17:30, ISO 8601)."
        ),
    ] = None,
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
    its last line; the policy picks which command runs next, until BUDGET calls are spent or
    the DEADLINE has passed."""
    if len(commands) < 2:
        raise UserError(f"{len(commands)} command is not allowed: give two or more")
    amount, until = _budget(budget, deadline, workers, len(commands))
    end = None if until is None else time.monotonic() + until  # until: from now
    with lock_checkpoint(checkpoint):  # before it is read: a second run is refused at once
        with _budget_fits(amount):
            selector = _selector(
                commands,
                name,
                amount,
                "pulls" if until is None else "seconds",
                policy,
                preset,
                parse_params(policy, param or []),
                seed,
                _score_range(score_range),
                checkpoint,
            )
        _run(selector, commands, workers, timeout, checkpoint, as_json, end)
    data = dict(summary(selector, commands))
    if as_json:
        typer.echo(json.dumps(data))
    else:
        _print(Console(), data)
