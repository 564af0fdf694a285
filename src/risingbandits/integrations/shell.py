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
output; so does a command still running after ``timeout`` seconds (it is ended first). Every
score recorded before stays in the checkpoint. Each command runs in a session of its own and is
ended, with anything it started, when the run ends, fails, is interrupted or is killed
(:class:`~risingbandits.integrations.lifetime.ProcessGuard`); a process a command leaves
running in the background after it returns is ended too.

A command's output is read as it comes, and only its end is kept (:class:`~.tail.Tail`): a
command may print gigabytes. A score is a plain decimal number (``0.85``, ``-3``, ``8.5e-1``);
``0_5`` or ``0x1p-1``, which Python's ``float`` would take, are refused. A checkpoint is used
by one run at a time: a second run on it is refused with one line naming the first (its lock
file, ``FILE.lock``, holds the pid, host and start of the run using it).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from risingbandits.integrations.checks import check_seconds
from risingbandits.integrations.handlers import signals_deferred
from risingbandits.integrations.lifetime import ProcessGuard
from risingbandits.integrations.tail import Tail
from risingbandits.locking import exclusive
from risingbandits.modelselect import ModelSelector
from risingbandits.modelselect.checkpoint import read_checkpoint, write_checkpoint
from risingbandits.policies.machinery.checkpoint import integer

SHELL = "/bin/sh"
SHOWN_OUTPUT = 200
"""Characters of a failing command's output quoted in the error line."""
CHUNK_BYTES = 1 << 16
POLL_SECONDS = 0.05
"""How often a command is checked for having exited while what it left behind holds its
output open, and for having run out of time."""
DRAIN_SECONDS = 0.5
"""How long output is still read once a command has ended (a process that left its session
may hold the pipe open)."""
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
NOT_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.ASCII | re.IGNORECASE)


class StepFailed(ValueError):
    """A command failed or printed no acceptable score (one line: candidate, step, output)."""


@dataclass(frozen=True)
class Step:
    """One finished call: candidate index and name, its step number, the score it printed."""

    index: int
    name: str
    step: int
    score: float


@dataclass(frozen=True)
class Output:
    """How one call ended: exit code, the end of its output, whether it ran out of time."""

    code: int
    out: Tail
    err: Tail
    timed_out: bool

    def shown(self) -> str:
        """The end of its error output (else of its output), quoted for a message."""
        return _quote(self.err.text() or self.out.text())


def parse_number(text: str) -> float | None:
    """``text`` (stripped) as a plain decimal or scientific number, NaN or an infinity; None
    for anything else, also what Python's ``float`` takes beyond that (``0_5``, ``٣``)."""
    text = text.strip()
    if NUMBER.fullmatch(text) or NOT_FINITE.fullmatch(text):
        return float(text)
    return None


def parse_score(stdout: str) -> float | None:
    """The number on the last non-empty line of ``stdout`` (None if there is none)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    return parse_number(lines[-1]) if lines else None


def _quote(text: str) -> str:
    text = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return repr(text if len(text) <= SHOWN_OUTPUT else "..." + text[-SHOWN_OUTPUT:])


class _Held(threading.local):
    """The checkpoints this thread holds (resolved paths)."""

    def __init__(self) -> None:
        self.paths: set[Path] = set()


_held = _Held()


@contextlib.contextmanager
def lock_checkpoint(path: str | Path | None) -> Iterator[None]:
    """Use the checkpoint ``path`` alone for the scope (nothing for None): a run in another
    process or thread holding it is refused with :class:`~risingbandits.locking.Busy`, one line
    naming it. A thread may take it again inside its own scope (load it, then run)."""
    if path is None:
        yield
        return
    target = Path(path).resolve()
    held = _held.paths
    if target in held:
        yield
        return
    what = f"checkpoint {str(path)!r}"
    advice = "wait for that run to end or stop it, or give another checkpoint file"
    with contextlib.ExitStack() as scope:
        try:
            scope.enter_context(exclusive(target.with_name(target.name + ".lock"), what, advice))
        except OSError as exc:  # its lock file beside it cannot be made
            raise ValueError(
                f"{what} cannot be written ({exc.strerror or exc}): give a file in an existing, "
                "writable folder"
            ) from None
        held.add(target)
        try:
            yield
        finally:
            held.discard(target)


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


def _read_chunk(streams: selectors.BaseSelector, key: selectors.SelectorKey) -> None:
    chunk = os.read(key.fd, CHUNK_BYTES)
    if chunk:
        key.data.feed(chunk)
    else:
        streams.unregister(key.fileobj)


def _read_until_exit(
    streams: selectors.BaseSelector, proc: subprocess.Popen[bytes], deadline: float | None
) -> bool:
    """Read the command's output until it exits (True) or ``deadline`` passes (False)."""
    while proc.poll() is None:
        left = POLL_SECONDS if deadline is None else deadline - time.monotonic()
        if left <= 0:
            return False
        pause = min(left, POLL_SECONDS)
        if streams.get_map():
            for key, _ in streams.select(pause):
                _read_chunk(streams, key)
        else:  # it closed its output and runs on
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(pause)
    return True


def _drain(streams: selectors.BaseSelector) -> None:
    """Read what is left in the pipes once the command and its session have ended."""
    deadline = time.monotonic() + DRAIN_SECONDS
    while streams.get_map() and (left := deadline - time.monotonic()) > 0:
        ready = streams.select(left)
        if not ready:
            return
        for key, _ in ready:
            _read_chunk(streams, key)


class _Runner:
    """Starts, waits for and ends the commands of one run (one thread per command running).

    Output comes through pipes, read as it comes into a bounded :class:`~.tail.Tail` (memory
    does not grow with the output); once the command has exited, its session is ended, so a
    process it left behind can neither hold the call open nor fill a pipe."""

    def __init__(
        self,
        commands: Sequence[str],
        names: Sequence[str],
        guard: ProcessGuard,
        timeout: float | None,
    ):
        self.commands = list(commands)
        self.names = list(names)
        self.guard = guard
        self.timeout = timeout
        self.groups: set[int] = set()
        self.lock = threading.Lock()
        self.closed = False

    def _start(self, index: int, step: int) -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            "RISINGBANDITS_CANDIDATE": self.names[index],
            "RISINGBANDITS_INDEX": str(index),
            "RISINGBANDITS_STEP": str(step),
        }
        with self.lock:
            if self.closed:
                raise RuntimeError("the run has ended: no command is started")
            proc = subprocess.Popen(
                [SHELL, "-c", self.commands[index]],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,
            )
            self.guard.add_group(proc.pid)
            self.groups.add(proc.pid)
        return proc

    def call(self, index: int, step: int) -> Output:
        proc = self._start(index, step)
        pipes: list[IO[bytes]] = [proc.stdout, proc.stderr]  # type: ignore[list-item]
        out, err = Tail(), Tail()
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        with selectors.DefaultSelector() as streams:
            for pipe, tail in zip(pipes, (out, err), strict=True):
                streams.register(pipe, selectors.EVENT_READ, tail)
            try:
                finished = _read_until_exit(streams, proc, deadline)
            finally:
                self.end_group(proc.pid)  # with anything it left running (all of it: late)
                code = proc.wait()
                _drain(streams)
                for pipe in pipes:
                    pipe.close()
        return Output(code, out, err, timed_out=not finished)

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


def _out_of_range(selector: ModelSelector, score: float) -> str | None:
    """Why ``score`` was refused when it lies outside the selector's score range (else None):
    the range, and the option that sets it."""
    low, high = selector.state_dict()["score_range"] or (0.0, 1.0)
    if low <= score <= high:
        return None
    return (
        f"score {score:g} is not in [{low:g}, {high:g}]: give the range of the scores with "
        "--score-range LOW,HIGH (score_range=(LOW, HIGH) of the ModelSelector in Python)"
    )


def _score(
    selector: ModelSelector, index: int, step: int, call: Output, timeout: float | None
) -> Step:
    """Record the score a call printed; one :class:`StepFailed` line if there is none."""
    name = selector.names[index]
    where = f"candidate {name!r} (step {step})"
    if call.timed_out:
        raise StepFailed(
            f"{where}: the command was still running after the timeout of {timeout:g} s and "
            f"was ended with everything it started; output {call.shown()}"
        )
    if call.code != 0:
        raise StepFailed(
            f"{where}: the command exited with code {call.code}; output {call.shown()}"
        )
    line = call.out.last_line()
    score = None if line is None else parse_number(line)
    if score is None:
        shown = _quote(call.out.text())
        raise StepFailed(f"{where}: the last line of its output is not a number: {shown}")
    if not math.isfinite(score):
        raise StepFailed(f"{where}: the last line of its output is {line!r}, not a finite score")
    try:
        selector.update(index, score)
    except ValueError as exc:
        raise StepFailed(f"{where}: {_out_of_range(selector, score) or exc}") from None
    return Step(index, name, step, score)


def _drive(
    selector: ModelSelector,
    commands: Sequence[str],
    workers: int,
    timeout: float | None,
    save: Callable[[], None],
    on_step: Callable[[Step], None],
    end: float,
) -> None:
    with ProcessGuard() as guard, ThreadPoolExecutor(workers) as pool:
        runner = _Runner(commands, selector.names, guard, timeout)
        running: dict[Future[Output], tuple[int, int]] = {}  # -> index, step

        def start(index: int) -> bool:
            """Start the step of ``index`` the selector chose; past ``end`` (the choice may
            have taken that long: a first ``select`` compiles) cancel it instead."""
            if time.monotonic() >= end:
                selector.cancel(index)
                return False
            step = int(selector.pulls[index]) + 1
            running[pool.submit(runner.call, index, step)] = (index, step)
            return True

        try:
            for index in selector.in_flight:  # pulls in flight when the run was saved
                start(index)
            while True:
                busy = {selector.names[index] for index, _ in running.values()}
                idle = [name for name in selector.active if name not in busy]
                while (
                    len(running) < workers
                    and idle
                    and selector.remaining > 0
                    and time.monotonic() < end
                ):
                    index = selector.select(available=idle)
                    if not start(index):
                        break  # the deadline has passed
                    idle.remove(selector.names[index])
                if not running:
                    return
                save()  # the new pulls in flight are started again after an interruption
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                failed: StepFailed | None = None  # raised once the other scores are recorded
                for future in sorted(done, key=lambda f: running[f]):
                    index, step = running.pop(future)
                    try:
                        with signals_deferred():  # a score recorded is a score saved
                            recorded = _score(selector, index, step, future.result(), timeout)
                            save()
                    except StepFailed as exc:
                        failed = failed or exc
                        continue
                    on_step(recorded)
                if failed is not None:
                    raise failed
        finally:
            runner.end_all()  # the threads' calls return at once


def _check_run(
    selector: Any, commands: Any, workers: Any, checkpoint: Any, on_step: Any
) -> list[str]:
    """The commands as a list, once every argument of :func:`run_commands` but the seconds is
    checked (one line otherwise)."""
    if not isinstance(selector, ModelSelector):
        raise ValueError(f"selector={selector!r} is not allowed: use a ModelSelector")
    if selector.cost == "given":
        raise ValueError(
            "a selector with cost='given' is not allowed: a command reports no cost; use "
            "cost='pulls' or cost='seconds'"
        )
    if (
        isinstance(commands, str)
        or not isinstance(commands, Sequence)
        or not all(isinstance(c, str) for c in commands)
    ):
        raise ValueError(
            f"commands={commands!r} is not allowed: use a list of shell commands (str), one per "
            "candidate"
        )
    if len(commands) != len(selector.names):
        raise ValueError(
            f"{len(commands)} commands are not allowed for {len(selector.names)} candidates: "
            "give one command per candidate"
        )
    if not integer(workers) or workers < 1:
        raise ValueError(f"workers={workers!r} is not allowed: use an integer >= 1")
    if checkpoint is not None and not isinstance(checkpoint, str | os.PathLike):
        raise ValueError(f"checkpoint={checkpoint!r} is not allowed: use None or a file path")
    if on_step is not None and not callable(on_step):
        raise ValueError(f"on_step={on_step!r} is not allowed: use None or a function of a Step")
    return list(commands)


def run_commands(
    selector: ModelSelector,
    commands: Sequence[str],
    *,
    workers: int = 1,
    checkpoint: str | Path | None = None,
    timeout: float | None = None,
    deadline: float | None = None,
    on_step: Callable[[Step], None] | None = None,
) -> ModelSelector:
    """Spend the selector's budget on the commands (candidate ``i`` runs ``commands[i]``),
    ``workers`` at a time, each call ended after ``timeout`` seconds (None: no limit); returns
    the selector. No call starts ``deadline`` seconds after this one (None: none), the time a
    choice takes included (a first ``select`` compiles the policy), and the calls running then
    finish. ``on_step`` is called after each score. The checkpoint is held for the run
    (:func:`lock_checkpoint`)."""
    left = None if deadline is None else check_seconds("deadline", deadline, zero=True)
    end = math.inf if left is None else time.monotonic() + left
    commands = _check_run(selector, commands, workers, checkpoint, on_step)
    seconds = None if timeout is None else check_seconds("timeout", timeout)

    def save() -> None:
        if checkpoint is not None:
            save_run(checkpoint, selector, commands)

    with lock_checkpoint(checkpoint):
        _drive(selector, commands, int(workers), seconds, save, on_step or (lambda step: None), end)
    return selector


def summary(selector: ModelSelector, commands: Sequence[str]) -> Mapping[str, Any]:
    """The selector's summary with each candidate's command."""
    return {**selector.summary(), "commands": dict(zip(selector.names, commands, strict=True))}
