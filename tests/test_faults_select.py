"""Issue 23 (items 4, 6, 7, 8, 10, 12): ``risingbandits select`` and its shell driver.

One run per checkpoint (a second is refused naming the first), output read in bounded memory,
a per-step timeout, scores that are plain numbers only, a budget that cannot be served in one
line, score-range errors that name the option, and the examples on the default policy.
"""

from __future__ import annotations

import inspect
import os
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import load_script
from process_checks import all_gone, identity, kill_left
from risingbandits.cli import app
from risingbandits.cli import select as select_cli
from risingbandits.integrations.shell import (
    StepFailed,
    load_run,
    lock_checkpoint,
    parse_number,
    parse_score,
    run_commands,
)
from risingbandits.integrations.tail import LINE_LIMIT, LONG, TAIL_BYTES, Tail
from risingbandits.locking import Busy
from risingbandits.modelselect import DEFAULT_POLICY, ModelSelector
from test_integrations_shell import one_line_error

runner = CliRunner()
CLI = "from risingbandits.cli import main; main()"


def logging_commands(log: Path, pause: float) -> list[str]:
    """Two candidates that log each call (candidate, step), pause, then print a score."""
    return [
        f"echo $RISINGBANDITS_CANDIDATE $RISINGBANDITS_STEP >> {log}; sleep {pause}; echo 0.{i}"
        for i in (4, 6)
    ]


# -- item 4: one run per checkpoint -------------------------------------------------------------


def test_a_second_select_on_one_checkpoint_is_refused_naming_the_first(tmp_path: Path) -> None:
    log, saved = tmp_path / "log", tmp_path / "run.json"
    cmds = logging_commands(log, 0.3)
    args = ["select", *cmds, "--budget", "6", "--checkpoint", str(saved), "--json"]
    first = subprocess.Popen(
        [sys.executable, "-c", CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while not saved.exists():  # saved once the first run holds the lock and has started
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        refused = one_line_error(args)
        assert first.wait(timeout=60) == 0
    finally:
        first.kill()
        first.wait()
    holder = f"pid {first.pid} on host {socket.gethostname()!r}, started "
    assert refused.startswith(f"error: checkpoint {str(saved)!r} is in use by {holder}"), refused
    calls = log.read_text().split("\n")[:-1]
    assert len(calls) == 6 and len(set(calls)) == 6  # the budget, each step once
    assert load_run(saved, cmds).done
    assert not (tmp_path / "run.json.lock").exists()  # the lock file goes with its run


def test_a_checkpoint_in_use_by_another_thread_is_refused_and_one_thread_may_nest(
    tmp_path: Path,
) -> None:
    saved = tmp_path / "run.json"
    cmds = ["echo 0.4", "echo 0.6"]
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with lock_checkpoint(saved):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        with pytest.raises(Busy, match=rf"checkpoint .* in use by pid {os.getpid()} "):
            run_commands(ModelSelector(2, 4), cmds, checkpoint=saved)
        # a lock file someone else wrote is only quoted when it holds a valid holder
        (tmp_path / "run.json.lock").write_text("[" * 5000)
        with pytest.raises(Busy, match="in use by another process: wait for that run"):
            run_commands(ModelSelector(2, 4), cmds, checkpoint=saved)
    finally:
        release.set()
        holder.join()
    with lock_checkpoint(saved):  # the CLI holds it while it loads, then runs
        assert run_commands(ModelSelector(2, 4), cmds, checkpoint=saved).done
    assert not (tmp_path / "run.json.lock").exists()


def test_a_file_of_the_user_s_where_the_lock_file_goes_is_never_replaced(tmp_path: Path) -> None:
    """``select --checkpoint poetry`` truncated the user's poetry.lock, wrote its pid into it and
    deleted it at the end."""
    log, saved = tmp_path / "log", tmp_path / "poetry"
    mine = tmp_path / "poetry.lock"
    mine.write_text('[[package]]\nname = "numpy"\n')
    args = ["select", *logging_commands(log, 0), "--budget", "2", "--checkpoint", str(saved)]
    args += ["--policy", "ucb1"]
    line = one_line_error(args)
    assert f"{str(mine)!r}, where its lock file goes, is a file that no run wrote" in line
    assert mine.read_text() == '[[package]]\nname = "numpy"\n'
    assert not log.exists() and not saved.exists()
    # what a killed run leaves (its record, or an empty file) is its lock file: taken over
    for left in ('{"pid": 1, "host": "box", "started": "2026-01-01T00:00:00+00:00"}', ""):
        mine.write_text(left)
        assert runner.invoke(app, args).exit_code == 0
        assert not mine.exists()
        saved.unlink()


def test_a_checkpoint_in_a_missing_folder_is_refused_before_any_command(tmp_path: Path) -> None:
    log, saved = tmp_path / "log", tmp_path / "missing" / "run.json"
    args = ["select", *logging_commands(log, 0), "--budget", "4", "--checkpoint", str(saved)]
    line = one_line_error(args)
    assert f"checkpoint {str(saved)!r} cannot be written (No such file or directory)" in line
    assert not log.exists()


# -- item 6 (CLI part): a budget that cannot be served ------------------------------------------


def test_a_budget_that_cannot_be_allocated_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def too_big(*args: Any, **kwargs: Any) -> ModelSelector:
        raise MemoryError("Unable to allocate 1.46 TiB for an array")

    monkeypatch.setattr(select_cli, "ModelSelector", too_big)
    line = one_line_error(["select", "echo 0.5", "echo 0.6", "--budget", "100000000000"])
    assert "--budget 100000000000 cannot be served" in line and "1.46 TiB" in line


def test_a_huge_budget_on_the_command_line_never_gives_a_traceback() -> None:
    """Refused, or (once the selector's memory follows its pulls) served until the first
    command fails: one line either way."""
    line = one_line_error(["select", "exit 3", "exit 3", "--budget", "100000000000"])
    assert "--budget 100000000000" in line or "exited with code 3" in line


# -- item 7: bounded output, per-step timeout ---------------------------------------------------

PEAK = """
import resource, sys
from risingbandits.cli import app
quiet, noisy = sys.argv[1:3], sys.argv[3:5]
for commands in (quiet, noisy):  # the first run loads everything: the second adds its output
    app(["select", *commands, "--budget", "2", "--json"], standalone_mode=False)
    print(f"peak_kb={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", file=sys.stderr)
"""


def test_a_command_printing_200_mb_does_not_grow_the_driver() -> None:
    mb = 100_000_000
    quiet = ["echo x; echo 0.5", "echo 0; echo 0.75"]
    noisy = [  # budget 2: one call each
        f"head -c {mb} /dev/zero | tr '\\0' x; echo; echo 0.5",  # one 100 MB line
        f"yes $(printf '%01000d' 0) | head -c {mb}; echo; echo 0.75",  # 100,000 lines
    ]
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *quiet, *noisy], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = (int(x.split()[0]) for x in done.stderr.split("peak_kb=")[1:])
    grown_mb = (after - before) / 1024
    assert grown_mb < 20, f"200 MB of output grew the driver by {grown_mb:.0f} MB"


def test_a_step_past_the_timeout_is_ended_with_its_group_and_stops_the_run(
    tmp_path: Path,
) -> None:
    pids, saved = tmp_path / "pids", tmp_path / "run.json"
    hang = f'[ "$RISINGBANDITS_STEP" -ge 2 ] && {{ sleep 300 & echo $! >> {pids}; sleep 300; }};'
    cmds = [f"{hang} echo 0.4", f"{hang} echo 0.6"]
    start = time.monotonic()
    with pytest.raises(StepFailed) as failure:
        run_commands(ModelSelector(2, 10, seed=0), cmds, checkpoint=saved, timeout=1.0)
    assert time.monotonic() - start < 15
    message = str(failure.value)
    assert "\n" not in message
    assert "(step 2): the command was still running after the timeout of 1 s" in message
    started = {identity(int(p)) for p in pids.read_text().split()}
    try:
        assert all_gone(started, 5.0)
    finally:
        kill_left(started)
    kept = load_run(saved, cmds)
    assert kept.t == 2 and len(kept.in_flight) == 1  # the timed-out step starts again on resume


def test_select_takes_a_timeout_and_refuses_a_bad_one() -> None:
    line = one_line_error(["select", "echo 0.5", "sleep 30", "--budget", "4", "--timeout", "0.3"])
    assert "candidate 'candidate1' (step 1)" in line and "timeout of 0.3 s" in line
    assert "timeout=0.0" in one_line_error(
        ["select", "echo 0.5", "echo 0.6", "--budget", "4", "--timeout", "0"]
    )


def reference_last_line(data: bytes) -> str | None:
    lines = [line for line in data.split(b"\n") if line.strip()]
    if not lines:
        return None
    text = lines[-1][:LINE_LIMIT].decode(errors="replace").strip()
    return text + LONG if len(lines[-1]) > LINE_LIMIT else text


def test_the_tail_keeps_the_last_line_and_end_whatever_the_chunks() -> None:
    rng = random.Random(0)
    pieces = [b"a", b"0.5", b" ", b"\t", b"\r", b"\n", b"\n\n", b"x" * 5000, b" " * 5000]
    for _ in range(2000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        tail, at = Tail(), 0
        while at < len(data):
            size = rng.choice([1, 3, 100, 5000, 70000])
            tail.feed(data[at : at + size])
            at += size
        assert tail.last_line() == reference_last_line(data), data[-80:]
        assert tail.text() == data[-TAIL_BYTES:].decode(errors="replace")


# -- item 8: plain numbers only; exit codes of the signals --------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [("0.85", 0.85), (" -3 ", -3.0), ("+.5", 0.5), ("5.", 5.0), ("8.5e-1", 0.85), ("1E2", 100.0)],
)
def test_plain_numbers_are_scores(text: str, value: float) -> None:
    assert parse_number(text) == value and parse_score(f"loss 3\n{text}\n\n") == value


@pytest.mark.parametrize("text", ["0_5", "1_000", "٣", "0x1p-1", "1e", "e3", ".", "0.5.1", ""])
def test_what_only_python_float_would_take_is_no_number(text: str) -> None:
    assert parse_number(text) is None and parse_score(text) is None


def test_a_digit_separator_or_a_non_finite_score_stops_the_run_in_one_line() -> None:
    line = one_line_error(["select", "echo 0.5", "echo 0_5", "--budget", "4"])
    assert "(step 1): the last line of its output is not a number: '0_5'" in line
    line = one_line_error(["select", "echo 0.5", "echo -inf", "--budget", "4"])
    assert "(step 1): the last line of its output is '-inf', not a finite score" in line


# -- item 12: the score range is the --score-range option ---------------------------------------


def test_score_range_errors_name_the_option() -> None:
    percent = one_line_error(["select", "echo 50", "echo 85", "--budget", "4"])
    assert "score 50 is not in [0, 1]" in percent and "--score-range LOW,HIGH" in percent
    assert "score_range=(low, high)" not in percent
    for given in ["1,0", "0_5,1", "0,nan", "0,1,2"]:
        line = one_line_error(
            ["select", "echo 1", "echo 2", "--budget", "4", "--score-range", given]
        )
        assert line.startswith(f"error: --score-range={given!r} is not allowed"), line
    wide = ["--score-range", "0,100", "--json"]
    assert (
        runner.invoke(app, ["select", "echo 50", "echo 85", "--budget", "4", *wide]).exit_code == 0
    )


# -- item 10: the example on the default policy -------------------------------------------------


def test_the_sklearn_example_uses_the_default_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    example = load_script("examples/tune_sklearn_partial_fit.py", "tune_sklearn_example")
    assert inspect.signature(example.tune).parameters["policy"].default == DEFAULT_POLICY
    asked: list[str] = []

    def tune(budget: int, policy: str, *rest: Any) -> dict[str, Any]:
        asked.append(policy)
        return {}

    monkeypatch.setattr(example, "tune", tune)
    monkeypatch.setattr(sys, "argv", ["tune_sklearn_partial_fit.py", "--json"])
    example.main()
    assert asked == [DEFAULT_POLICY]
