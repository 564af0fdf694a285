"""``risingbandits select --deadline``: seconds or a clock time, a budget in seconds of training."""

from __future__ import annotations

import datetime as dt
import json
import math
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from risingbandits.cli import app
from risingbandits.cli import select as select_module
from risingbandits.cli.errors import UserError
from risingbandits.cli.select import _budget, _seconds_until, _started_ago
from risingbandits.experiments import watchdog
from risingbandits.integrations.shell import run_commands
from risingbandits.modelselect import ModelSelector
from test_integrations_shell import commands, logged_steps, one_line_error, runner

NOW = dt.datetime(2030, 1, 31, 17, 0).astimezone()  # local time, as the command's now
IN_UTC = NOW.astimezone(dt.UTC)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90", 90.0),
        ("1.5", 1.5),
        ("17:30", 1800.0),  # later today (local time)
        ("16:59:30", 86370.0),  # passed today: tomorrow
        ((IN_UTC + dt.timedelta(minutes=5)).time().isoformat() + "+00:00", 300.0),
        ("2030-01-31T18:00", 3600.0),
        ((IN_UTC + dt.timedelta(days=1)).isoformat(), 86400.0),
    ],
)
def test_a_deadline_is_seconds_or_a_clock_time(text: str, seconds: float) -> None:
    assert _seconds_until(text, NOW) == seconds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0", "--deadline='0' is not allowed: give a finite number of seconds > 0 or a time"),
        ("-5", "--deadline='-5' is not allowed: give a finite number"),
        ("inf", "--deadline='inf' is not allowed: give a finite number"),
        ("2030-01-31T16:00", "--deadline='2030-01-31T16:00' is not allowed: give a finite"),
        ("soon", "--deadline='soon' is not allowed: use seconds"),
        ("25:00", "--deadline='25:00' is not allowed: use seconds"),
    ],
)
def test_a_bad_deadline_is_refused(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        _seconds_until(text, NOW)


@pytest.fixture
def started_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command starts now, not when pytest did: ``--deadline 1`` in the runner is 1 s."""
    monkeypatch.setattr(select_module, "_started_ago", lambda: 0.0)


@pytest.fixture
def compiled() -> None:
    """The default's kernels for a budget in seconds compiled in this process first: on a cold
    kernel cache their compilation (about 40 s) would outlast a deadline of a second."""
    sel = ModelSelector(2, 4.0, cost="seconds")
    sel.update(sel.select(), 0.5)


def test_seconds_count_from_the_command_start() -> None:
    assert _seconds_until("5", NOW, ago=3.0) == 2.0
    assert _seconds_until("5", NOW) == 5.0
    assert _seconds_until("17:30", NOW, ago=3.0) == 1800.0  # clock times are absolute
    assert _seconds_until("2030-01-31T18:00", NOW, ago=3.0) == 3600.0
    with pytest.raises(UserError, match=r"--deadline='2' is not allowed: it has passed \(seco"):
        _seconds_until("2", NOW, ago=3.04)


def test_the_budget_and_the_end_count_from_the_process_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(select_module, "_started_ago", lambda: 3.0)
    assert _budget(None, "5", 2, 3) == (4.0, 2.0)  # 2 s left, on 2 workers
    message = one_line_error(["select", *commands(tmp_path / "log"), "--deadline", "2"])
    assert message == (
        "error: --deadline='2' is not allowed: it has passed (seconds count from the command's "
        "start, 3.0 s ago); give more seconds"
    )


def test_the_process_start_is_read_from_proc() -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc here")
    before = time.monotonic()
    with subprocess.Popen(["sleep", "30"]) as child:
        try:
            ago = _started_ago(child.pid)
            # A clock tick (10 ms) of rounding, and a little for the clocks read apart.
            assert -0.02 <= ago <= time.monotonic() - before + 0.03
        finally:
            child.kill()
    assert 0.0 < _started_ago() < time.clock_gettime(time.CLOCK_BOOTTIME)  # pytest's own


def test_without_proc_seconds_count_from_now(monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m:
        m.setattr(watchdog, "_stat_fields", lambda pid: None)  # no /proc
        assert _started_ago() == 0.0
    monkeypatch.delattr(time, "CLOCK_BOOTTIME")  # a /proc without Linux's boot clock
    assert _started_ago() == 0.0


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("16:59:30", "2030-02-01 16:59:30"),
        ("08:00", "2030-02-01 08:00"),
        ("17:00", "2030-02-01 17:00"),
    ],
)
def test_a_clock_time_taken_as_tomorrow_is_said(
    text: str, shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _seconds_until(text, NOW)
    assert capsys.readouterr().err == (
        f"risingbandits: --deadline {text} is taken as {shown} (tomorrow): the clock passed it "
        "today; give seconds or a date and time for another deadline\n"
    )
    _seconds_until("17:30", NOW)
    _seconds_until("2030-01-31T18:00", NOW)
    assert capsys.readouterr().err == ""  # later today, or a date: no notice


@pytest.mark.usefixtures("started_now")
def test_cli_takes_a_budget_or_a_deadline(tmp_path: Path) -> None:
    cmds = commands(tmp_path / "log")
    both = one_line_error(["select", *cmds, "--budget", "5", "--deadline", "60"])
    assert "give --budget (calls in total) or --deadline" in both
    assert "one of the two" in one_line_error(["select", *cmds])
    assert "--deadline='soon'" in one_line_error(["select", *cmds, "--deadline", "soon"])
    saved = tmp_path / "run.json"
    assert runner.invoke(app, ["select", *cmds, "--budget", "4", "--checkpoint", str(saved)])
    other = one_line_error(["select", *cmds, "--deadline", "60", "--checkpoint", str(saved)])
    assert "budget in pulls, not seconds" in other


@pytest.mark.usefixtures("compiled", "started_now")
def test_cli_stops_starting_calls_at_the_deadline_and_resumes_with_a_new_one(
    tmp_path: Path,
) -> None:
    log, saved = tmp_path / "log", tmp_path / "run.json"
    args = ["select", *commands(log, extra="sleep 0.2; "), "--checkpoint", str(saved), "--json"]
    begin = time.monotonic()
    first = runner.invoke(app, [*args, "--deadline", "1", "--workers", "2"])
    took = time.monotonic() - begin
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert data["cost"] == "seconds" and data["spent"] >= data["budget"]
    assert data["budget"] <= 2.0  # two workers for one second, less if the clock ran out
    assert took < 1.0 + 10.0  # the calls running at the deadline end a call's length after it
    steps = sum(data["pulls"].values())
    more = runner.invoke(app, [*args, "--deadline", "1"])
    assert more.exit_code == 0, more.output
    again = json.loads(more.stdout)
    assert again["budget"] <= data["spent"] + 1.0 and sum(again["pulls"].values()) > steps
    for name, calls in logged_steps(log).items():
        assert calls == list(range(1, len(calls) + 1)), name


def slow_first_choice(delay: float) -> Callable[..., int]:
    """``ModelSelector.select`` whose first choice takes ``delay`` seconds, as a first
    ``select`` that compiles the policy's kernels does on a cold cache."""
    select = ModelSelector.select

    def slow(self: ModelSelector, available: object = None) -> int:
        if self.t == 0 and not self.in_flight:
            time.sleep(delay)
        return select(self, available)

    return slow


@pytest.mark.parametrize("cost", ["pulls", "seconds"])
def test_no_call_starts_when_the_first_choice_ends_past_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cost: str
) -> None:
    log = tmp_path / "log"
    monkeypatch.setattr(ModelSelector, "select", slow_first_choice(0.5))
    selector = ModelSelector(3, 30 if cost == "pulls" else 60.0, cost=cost)
    run_commands(selector, commands(log), workers=2, deadline=0.1)
    assert not log.exists()  # no command ran
    assert selector.t == 0 and not selector.in_flight and sum(selector.pulls) == 0


def test_calls_start_until_the_deadline_and_those_running_finish(tmp_path: Path) -> None:
    log = tmp_path / "log"
    begin = time.monotonic()
    selector = run_commands(
        ModelSelector(3, 1000), commands(log, extra="sleep 0.3; "), workers=2, deadline=1.0
    )
    took = time.monotonic() - begin
    steps = logged_steps(log)
    assert 1.0 <= took < 1.0 + 10.0  # the last calls started before 1 s and ran to the end
    assert 2 <= selector.t == sum(len(calls) for calls in steps.values()) < 1000
    assert not selector.in_flight and not selector.done


@pytest.mark.parametrize("deadline", [-1, math.inf, math.nan, "60", True])
def test_run_commands_refuses_a_bad_deadline(tmp_path: Path, deadline: object) -> None:
    with pytest.raises(ValueError, match=r"deadline=.* is not allowed: use a finite number of"):
        run_commands(ModelSelector(3, 9), commands(tmp_path / "log"), deadline=deadline)  # type: ignore[arg-type]


@pytest.mark.usefixtures("started_now")
def test_cli_starts_no_call_when_the_first_choice_ends_past_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log, saved = tmp_path / "log", tmp_path / "run.json"
    monkeypatch.setattr(ModelSelector, "select", slow_first_choice(1.5))
    for shown in (["--json", "--checkpoint", str(saved)], []):
        result = runner.invoke(app, ["select", *commands(log), "--deadline", "1", *shown])
        assert result.exit_code == 1, result.output  # not a success: the run did no work
        assert result.stdout == "" and not log.exists() and not saved.exists()
        assert result.stderr.splitlines() == [f"error: {select_module.NO_CALL}"]
        assert "error: no call started: the deadline passed first" in result.stderr
