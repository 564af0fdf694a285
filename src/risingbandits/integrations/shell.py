"""Drive K shell commands with a rising-bandit policy: any framework, no Python glue.

Each call of candidate ``i``'s command trains that candidate one step and prints its new score
on the last line of its standard output. The command runs in ``/bin/sh`` with
``RISINGBANDITS_CANDIDATE`` (its name), ``RISINGBANDITS_INDEX`` and ``RISINGBANDITS_STEP`` (1 for
its first call) in the environment; it keeps its own state between calls (a model file, say).
A step that was in flight when a run was interrupted is started again on resume with the same
step number, so a command should redo a step it finds half done.

Up to ``workers`` commands run at once, through the selector's pulls in flight; a candidate
trains one step at a time (its next step continues from the last), so at most one command per
candidate runs. After each score the checkpoint (if any) is rewritten atomically: the selector
with its pulls in flight, plus the commands. A command that fails, or whose last line is not a
number the selector accepts, stops the run with one line naming the candidate, the step and the
output; every score recorded before stays in the checkpoint. Each command runs in a session of
its own and is ended, with anything it started, when the run ends, fails, is interrupted or is
killed (:class:`~risingbandits.integrations.lifetime.ProcessGuard`); a process a command leaves
running in the background after it returns is ended too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from risingbandits.integrations.lifetime import ProcessGuard
from risingbandits.modelselect import ModelSelector
from risingbandits.modelselect.checkpoint import read_checkpoint, write_checkpoint

SHELL = "/bin/sh"
SHOWN_OUTPUT = 200
"""Characters of a failing command's output quoted in the error line."""


class StepFailed(ValueError):
    """A command failed or printed no acceptable score (one line: candidate, step, output)."""


@dataclass(frozen=True)
class Step:
    """One finished call: candidate index and name, its step number, the score it printed."""

    index: int
    name: str
    step: int
    score: float


def parse_score(stdout: str) -> float | None:
    """The number on the last non-empty line of ``stdout`` (None if there is none)."""
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    if not lines:
        return None
    try:
        return float(lines[-1])
    except ValueError:
        return None


def _quote(text: str) -> str:
    text = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return repr(text if len(text) <= SHOWN_OUTPUT else "..." + text[-SHOWN_OUTPUT:])


def save_run(path: str | Path, selector: ModelSelector, commands: Sequence[str]) -> None:
    """Write the selector's checkpoint (pulls in flight included) with the commands beside,
    atomically; :meth:`ModelSelector.load` reads it too."""
    write_checkpoint(path, {**selector.state_dict(), "commands": list(commands)})


def load_run(path: str | Path, commands: Sequence[str]) -> ModelSelector:
    """The selector saved by :func:`save_run`, refused if it was saved for other commands."""
    data = read_checkpoint(path)
    if data.get("commands") != list(commands):
        raise ValueError(
            f"checkpoint {str(path)!r} was written for other commands ({data.get('commands')}): "
            "give the same commands in the same order, or another --checkpoint file"
        )
    return ModelSelector.from_state_dict(data)


class _Runner:
    """Starts, waits for and ends the commands of one run (one thread per command running).

    Output goes to unnamed temporary files, not pipes: a process a command leaves behind can
    neither hold the call open nor block on a full pipe."""

    def __init__(self, commands: Sequence[str], names: Sequence[str], guard: ProcessGuard):
        self.commands = list(commands)
        self.names = list(names)
        self.guard = guard
        self.groups: set[int] = set()
        self.lock = threading.Lock()
        self.closed = False

    def call(self, index: int, step: int) -> tuple[int, str, str]:
        env = {
            **os.environ,
            "RISINGBANDITS_CANDIDATE": self.names[index],
            "RISINGBANDITS_INDEX": str(index),
            "RISINGBANDITS_STEP": str(step),
        }
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            with self.lock:
                if self.closed:
                    raise RuntimeError("the run has ended: no command is started")
                proc = subprocess.Popen(
                    [SHELL, "-c", self.commands[index]],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    env=env,
                    start_new_session=True,
                )
                self.guard.add_group(proc.pid)
                self.groups.add(proc.pid)
            try:
                code = proc.wait()
            finally:
                self.end_group(proc.pid)  # with anything it left running
            out.seek(0)
            err.seek(0)
            return code, out.read().decode(errors="replace"), err.read().decode(errors="replace")

    def end_group(self, pgid: int) -> None:
        with self.lock:
            if pgid in self.groups:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, signal.SIGKILL)
                self.groups.discard(pgid)
                self.guard.remove_group(pgid)

    def end_all(self) -> None:
        with self.lock:
            self.closed = True
        for pgid in list(self.groups):
            self.end_group(pgid)


def _score(selector: ModelSelector, index: int, step: int, code: int, out: str, err: str) -> Step:
    """Record the score a call printed; one :class:`StepFailed` line if there is none."""
    name = selector.names[index]
    where = f"candidate {name!r} (step {step})"
    if code != 0:
        output = _quote(err or out)
        raise StepFailed(f"{where}: the command exited with code {code}; output {output}")
    score = parse_score(out)
    if score is None:
        raise StepFailed(f"{where}: the last line of its output is not a number: {_quote(out)}")
    try:
        selector.update(index, score)
    except ValueError as exc:
        raise StepFailed(f"{where}: {exc}") from None
    return Step(index, name, step, score)


def _drive(
    selector: ModelSelector,
    commands: Sequence[str],
    workers: int,
    save: Callable[[], None],
    on_step: Callable[[Step], None],
) -> None:
    with ProcessGuard() as guard, ThreadPoolExecutor(workers) as pool:
        runner = _Runner(commands, selector.names, guard)
        running: dict[Future[tuple[int, str, str]], tuple[int, int]] = {}  # -> index, step

        def start(index: int) -> None:
            step = int(selector.pulls[index]) + 1
            running[pool.submit(runner.call, index, step)] = (index, step)

        try:
            for index in selector.in_flight:  # pulls in flight when the run was saved
                start(index)
            while True:
                busy = {selector.names[index] for index, _ in running.values()}
                idle = [name for name in selector.active if name not in busy]
                while len(running) < workers and idle and selector.remaining > 0:
                    index = selector.select(available=idle)
                    start(index)
                    idle.remove(selector.names[index])
                if not running:
                    return
                save()  # the new pulls in flight are started again after an interruption
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: running[f]):
                    index, step = running.pop(future)
                    recorded = _score(selector, index, step, *future.result())
                    save()
                    on_step(recorded)
        finally:
            runner.end_all()  # the threads' calls return at once


def run_commands(
    selector: ModelSelector,
    commands: Sequence[str],
    *,
    workers: int = 1,
    checkpoint: str | Path | None = None,
    on_step: Callable[[Step], None] | None = None,
) -> ModelSelector:
    """Spend the selector's budget on the commands (candidate ``i`` runs ``commands[i]``),
    ``workers`` at a time; returns the selector. ``on_step`` is called after each score."""
    if len(commands) != len(selector.names):
        raise ValueError(
            f"{len(commands)} commands are not allowed for {len(selector.names)} candidates: "
            "give one command per candidate"
        )
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers={workers!r} is not allowed: use an integer >= 1")

    def save() -> None:
        if checkpoint is not None:
            save_run(checkpoint, selector, commands)

    _drive(selector, commands, workers, save, on_step or (lambda step: None))
    return selector


def summary(selector: ModelSelector, commands: Sequence[str]) -> Mapping[str, Any]:
    """The selector's summary with each candidate's command."""
    return {**selector.summary(), "commands": dict(zip(selector.names, commands, strict=True))}
