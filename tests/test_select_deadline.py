"""``risingbandits select --deadline``: seconds or a clock time, a budget in seconds of training."""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path

import pytest

from risingbandits.cli import app
from risingbandits.cli.errors import UserError
from risingbandits.cli.select import _seconds_until
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
    assert took < 1.0 + 5.0  # the calls running at the deadline end a call's length after it
    steps = sum(data["pulls"].values())
    more = runner.invoke(app, [*args, "--deadline", "1"])
    assert more.exit_code == 0, more.output
    again = json.loads(more.stdout)
    assert again["budget"] <= data["spent"] + 1.0 and sum(again["pulls"].values()) > steps
    for name, calls in logged_steps(log).items():
        assert calls == list(range(1, len(calls) + 1)), name
