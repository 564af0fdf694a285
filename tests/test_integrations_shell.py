"""The shell driver (``risingbandits select``): real commands, parallel workers, failures,
checkpoints, and no command outliving the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from process_checks import all_gone, identity
from risingbandits.cli import app
from risingbandits.integrations.shell import StepFailed, load_run, parse_score, run_commands
from risingbandits.modelselect import ModelSelector

runner = CliRunner()
CAPS = (0.5, 0.9, 0.7)  # candidate i's score after n steps: CAPS[i] * n / (n + 3)


def commands(log: Path, caps: tuple[float, ...] = CAPS, extra: str = "") -> list[str]:
    """Each call logs its candidate and step, then prints its score on its last line."""
    return [
        f"echo $RISINGBANDITS_CANDIDATE $RISINGBANDITS_STEP >> {log}; {extra}"
        f"echo training...; awk -v n=$RISINGBANDITS_STEP 'BEGIN {{ print {cap} * n / (n + 3) }}'"
        for cap in caps
    ]


def logged_steps(log: Path) -> dict[str, list[int]]:
    steps: dict[str, list[int]] = {}
    for line in log.read_text().splitlines():
        name, step = line.split()
        steps.setdefault(name, []).append(int(step))
    return steps


def test_parse_score_takes_the_last_non_empty_line() -> None:
    assert parse_score("epoch 1\nloss 0.3\n0.75\n\n") == 0.75
    assert parse_score("0.75\ndone\n") is None
    assert parse_score("") is None


def test_a_sequential_run_spends_the_budget_and_is_reproducible(tmp_path: Path) -> None:
    outcomes = []
    for run in range(2):
        log = tmp_path / f"log{run}"
        selector = run_commands(ModelSelector(3, 30, seed=4), commands(log))
        assert selector.done and sum(selector.pulls) == 30
        steps = logged_steps(log)
        for i, name in enumerate(selector.names):  # steps 1..n, each once, in order
            assert steps.get(name, []) == list(range(1, int(selector.pulls[i]) + 1))
        outcomes.append(selector.history)
    assert outcomes[0] == outcomes[1]
    assert selector.summary()["recommended"] == "candidate1"


def test_parallel_workers_spend_the_budget_exactly_once(tmp_path: Path) -> None:
    log = tmp_path / "log"
    # random delays: the scores arrive out of order
    slow = "sleep 0.0$(awk 'BEGIN { srand(); print int(rand() * 9) }');"
    selector = run_commands(ModelSelector(3, 24, seed=1), commands(log, extra=slow), workers=3)
    assert selector.done and sum(selector.pulls) == 24 and not selector.in_flight
    steps = logged_steps(log)
    for i, name in enumerate(selector.names):
        assert sorted(steps.get(name, [])) == list(range(1, int(selector.pulls[i]) + 1))


def test_a_failing_command_is_one_line_and_the_scores_before_it_are_kept(tmp_path: Path) -> None:
    log, flag, saved = tmp_path / "log", tmp_path / "fail", tmp_path / "run.json"
    flag.touch()
    cmds = commands(
        log,
        extra=f'[ "$RISINGBANDITS_STEP" -ge 3 ] && [ -e {flag} ] && '
        'echo "CUDA out of memory" >&2 && exit 3; ',
    )
    with pytest.raises(StepFailed) as failure:
        run_commands(ModelSelector(3, 20, seed=0), cmds, checkpoint=saved)
    message = str(failure.value)
    assert "\n" not in message and "step 3" in message and "exited with code 3" in message
    assert "CUDA out of memory" in message and "candidate" in message
    recorded = load_run(saved, cmds)
    assert recorded.t == sum(len(s) for s in logged_steps(log).values()) - 1  # all but the failed
    flag.unlink()
    resumed = run_commands(load_run(saved, cmds), cmds, checkpoint=saved)
    assert resumed.done and sum(resumed.pulls) == 20
    assert resumed.history[: recorded.t] == recorded.history  # nothing recorded was lost


def test_a_score_that_finished_with_a_failure_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two calls that finish together, the first (by candidate) failing: the second's score is
    recorded before the failure is raised (it was lost and its step run again on resume)."""
    import risingbandits.integrations.shell as shell

    log, saved = tmp_path / "log", tmp_path / "run.json"
    cmds = commands(log)
    cmds[0] = f"echo candidate0 $RISINGBANDITS_STEP >> {log}; exit 3"
    monkeypatch.setattr(shell, "wait", lambda fs, return_when: (set(fs), set()))  # every call
    with pytest.raises(StepFailed, match=r"candidate 'candidate0' \(step 1\): .*code 3"):
        run_commands(ModelSelector(2, 10, seed=0), cmds[:2], workers=2, checkpoint=saved)
    recorded = load_run(saved, cmds[:2])
    assert list(recorded.pulls) == [0, 1] and recorded.in_flight == (0,)
    assert logged_steps(log) == {"candidate0": [1], "candidate1": [1]}


def test_a_signal_while_a_score_is_saved_comes_after_the_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C arriving while the second score's checkpoint is written is raised once it is
    written: the checkpoint keeps every score the selector recorded (a CI run's SIGHUP came
    between the two, and the CLI said 3 scores were kept where the file held 2)."""
    import risingbandits.integrations.shell as shell

    saved, writes = tmp_path / "run.json", []
    write = shell.save_run

    def interrupted_write(*args: object) -> None:
        writes.append(args)
        if len(writes) == 4:  # in flight, first score, in flight, second score
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)  # the handler would run here, mid-save, without the deferral
        write(*args)  # type: ignore[arg-type]

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(shell, "save_run", interrupted_write)
    selector = ModelSelector(3, 9, seed=0)
    before = signal.signal(signal.SIGINT, stop)  # Python's own (a Ray test may leave Tune's)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_commands(selector, commands(tmp_path / "log"), checkpoint=saved)
        assert signal.getsignal(signal.SIGINT) is stop
    finally:
        signal.signal(signal.SIGINT, before)
    assert selector.t == 2 and load_run(saved, commands(tmp_path / "log")).history == (
        selector.history
    )


@pytest.mark.parametrize(
    ("output", "expected"),
    [("echo done", "is not a number: 'done'"), ("echo 1.5", r"score 1.5 is not in \[0, 1\]")],
)
def test_a_command_without_an_acceptable_score_names_candidate_and_output(
    tmp_path: Path, output: str, expected: str
) -> None:
    cmds = ["echo 0.5", output]
    with pytest.raises(StepFailed, match=rf"candidate 'candidate1' \(step 1\): .*{expected}"):
        run_commands(ModelSelector(2, 10, seed=0), cmds)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"commands": "ab"}, "^commands='ab' is not allowed: use a list of shell commands"),
        ({"commands": None}, "^commands=None is not allowed"),
        ({"commands": [1, 2]}, r"^commands=\[1, 2\] is not allowed"),
        ({"selector": None}, "^selector=None is not allowed: use a ModelSelector"),
        (
            {"selector": ModelSelector(2, 10.0, "ucb1", cost="given")},
            "^a selector with cost='given' is not allowed: a command reports no cost",
        ),
        ({"checkpoint": 3}, "^checkpoint=3 is not allowed: use None or a file path"),
        ({"on_step": 3}, "^on_step=3 is not allowed: use None or a function"),
        ({"timeout": 10**400}, "^timeout=1000.* is not allowed: use a finite number of seconds"),
        ({"deadline": 10**400}, "^deadline=1000.* is not allowed: use a finite number of"),
    ],
)
def test_bad_arguments_are_refused_before_any_command_runs(
    tmp_path: Path, options: dict, message: str
) -> None:
    log = tmp_path / "log"
    arguments = {"selector": ModelSelector(2, 10, "ucb1"), "commands": commands(log, CAPS[:2])}
    with pytest.raises(ValueError, match=message) as error:
        run_commands(**{**arguments, **options})
    assert "\n" not in str(error.value) and not log.exists()


def test_numpy_integer_workers_are_taken(tmp_path: Path) -> None:
    selector = run_commands(
        ModelSelector(2, 6, "ucb1"), commands(tmp_path / "log", CAPS[:2]), workers=np.int64(2)
    )
    assert selector.done and sum(selector.pulls) == 6


def one_line_error(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_cli_json_summary_and_resume_with_a_bigger_budget(tmp_path: Path) -> None:
    log, saved = tmp_path / "log", tmp_path / "run.json"
    args = ["select", *commands(log), "--name", "a", "--name", "b", "--name", "c"]
    first = runner.invoke(app, [*args, "--budget", "12", "--checkpoint", str(saved), "--json"])
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert sum(data["pulls"].values()) == 12 and set(data["pulls"]) == {"a", "b", "c"}
    assert data["recommended_score"] == data["last_scores"][data["recommended"]]
    assert data["best_last_score"] == max(x for x in data["last_scores"].values() if x)
    more = runner.invoke(app, [*args, "--budget", "20", "--checkpoint", str(saved), "--json"])
    assert more.exit_code == 0, more.output
    assert sum(json.loads(more.stdout)["pulls"].values()) == 20
    for name, steps in logged_steps(log).items():
        assert steps == list(range(1, len(steps) + 1)), name
    human = runner.invoke(app, [*args, "--budget", "20", "--checkpoint", str(saved)])
    assert human.exit_code == 0 and "recommended:" in human.stdout


def test_cli_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    cmds = commands(tmp_path / "log")
    assert "two or more" in one_line_error(["select", cmds[0], "--budget", "5"])
    assert "workers=0" in one_line_error(["select", *cmds, "--budget", "5", "--workers", "0"])
    assert "--name" in one_line_error(["select", *cmds, "--budget", "5", "--name", "a"])
    assert "budget" in one_line_error(["select", *cmds, "--budget", "2"])
    saved = tmp_path / "run.json"
    assert runner.invoke(app, ["select", *cmds, "--budget", "4", "--checkpoint", str(saved)])
    other = one_line_error(["select", *cmds[:2], "--budget", "5", "--checkpoint", str(saved)])
    assert "other commands" in other
    policy = ["--policy", "ucb1", "--checkpoint", str(saved)]
    assert "same options" in one_line_error(["select", *cmds, "--budget", "5", *policy])
    failing = one_line_error(["select", "echo 0.5", "echo oops >&2; exit 4", "--budget", "4"])
    assert "candidate 'candidate1' (step 1)" in failing and "'oops'" in failing


CLI = "from risingbandits.cli import main; main()"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc")
@pytest.mark.parametrize(
    "signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name
)
def test_commands_end_with_the_cli_and_resume_restarts_them(
    tmp_path: Path, signum: signal.Signals
) -> None:
    pids, saved = tmp_path / "pids", tmp_path / "run.json"
    # each call leaves a background child behind it and waits; the child writes its pid
    cmds = [
        f"sleep 300 & echo $! >> {pids}; sleep 0.$RISINGBANDITS_STEP; echo 0.{i}"
        for i in range(1, 4)
    ]
    cli = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CLI,
            "select",
            *cmds,
            "--budget",
            "9",
            "--workers",
            "2",
            "--checkpoint",
            str(saved),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not saved.exists() or len(load_run(saved, cmds).history) < 2:
            assert cli.poll() is None and time.monotonic() < deadline, cli.stderr
            time.sleep(0.05)
        os.kill(cli.pid, signum)
        cli.wait(timeout=30)
        started = {identity(int(p)) for p in pids.read_text().split()}
        assert all_gone(started, 10.0)
        if signum != signal.SIGKILL:  # like `sweep`: 128 + the signal, one line
            said = cli.stderr.read() if cli.stderr else ""
            assert cli.returncode == 128 + signum, said
            kept = f"; {len(load_run(saved, cmds).history)} scores kept in {str(saved)!r}"
            assert said.strip().splitlines()[-1] == (
                f"stopped by {signum.name}: the commands were ended{kept}"
            )
    finally:
        cli.kill()
        cli.wait()
    kept = load_run(saved, cmds)
    resumed = run_commands(kept, cmds, checkpoint=saved)
    assert resumed.done and sum(resumed.pulls) == 9
    assert resumed.history[: len(kept.history)] == kept.history
