"""ProcessGuard: what a scope starts ends with it, also when its owner is killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from process_checks import Process, all_gone, identity, kill_left, running
from risingbandits.integrations.lifetime import ProcessGuard

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc")

# The owner starts, inside a guard: a command in a session of its own with a background
# grandchild (registered group), and a plain child that starts a grandchild (found in /proc).
OWNER = """
import os, subprocess, sys, time
PLAIN = ("import subprocess, time; p = subprocess.Popen(['sleep', '303']); "
         "print(p.pid, flush=True); time.sleep(300)")
from risingbandits.integrations.lifetime import ProcessGuard
spared = subprocess.Popen(["sleep", "300"])
with ProcessGuard(poll_seconds=60, grace_seconds=1.0) as guard:  # found by scan()
    group = subprocess.Popen(["sh", "-c", "sleep 301 & echo $!; sleep 302"],
                             stdout=subprocess.PIPE, start_new_session=True, text=True)
    guard.add_group(group.pid)
    background = group.stdout.readline().strip()
    plain = subprocess.Popen([sys.executable, "-c", PLAIN], stdout=subprocess.PIPE, text=True)
    grandchild = plain.stdout.readline().strip()
    print(spared.pid, group.pid, background, plain.pid, grandchild, flush=True)
    guard.scan()  # the guardian has seen them all
    print("ready", flush=True)
    sys.stdin.readline()  # "close": leave the scope when the test says so; "wait": never
    if sys.argv[1] == "wait":
        time.sleep(300)
print("closed", flush=True)
time.sleep(300)
"""


def start_owner(mode: str) -> tuple[subprocess.Popen[str], Process, set[Process]]:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert owner.stdout is not None
    spared, *started = (identity(int(x)) for x in owner.stdout.readline().split())
    assert owner.stdout.readline().strip() == "ready"
    assert all(running(p) for p in [spared, *started])
    return owner, spared, set(started)


def test_sigkill_of_the_owner_ends_everything_it_started_in_the_scope() -> None:
    owner, spared, started = start_owner("wait")
    try:
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
        assert all_gone(started, 8.0), [p for p in started if running(p)]
        assert running(spared)  # it was there before the scope opened
    finally:
        kill_left({spared, *started})


def test_leaving_the_scope_ends_what_it_started_and_only_that() -> None:
    owner, spared, started = start_owner("close")
    try:
        assert owner.stdin is not None and owner.stdout is not None
        owner.stdin.write("close\n")
        owner.stdin.flush()
        assert owner.stdout.readline().strip() == "closed"  # __exit__ waited for the guardian
        assert not any(running(p) for p in started)
        assert running(spared) and owner.poll() is None
    finally:
        owner.kill()
        owner.wait()
        kill_left({spared, *started})


# A child that, told to stop, starts a process of its own (as Ray's raylet may start a worker)
# and keeps running until SIGKILL.
RESPAWNER = """
import signal, subprocess, sys, time
from risingbandits.integrations.lifetime import ProcessGuard
STUBBORN = ("import signal, subprocess, time\\n"
            "QUIET = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\\n"
            "def stop(*_):\\n"
            "    p = subprocess.Popen(['sleep', '304'], **QUIET)\\n"
            "    open(OUT, 'w').write(str(p.pid))\\n"
            "signal.signal(signal.SIGTERM, stop)\\n"
            "print('armed', flush=True)\\n"
            "while True: time.sleep(0.1)")
with ProcessGuard(poll_seconds=60, grace_seconds=1.5) as guard:
    child = subprocess.Popen([sys.executable, "-c", f"OUT = {sys.argv[1]!r}\\n" + STUBBORN],
                             stdout=subprocess.PIPE, text=True)
    child.stdout.readline()
    guard.scan()
print(child.pid, flush=True)
"""


def test_a_process_started_while_the_scope_ends_it_is_ended_too(tmp_path: Path) -> None:
    out = tmp_path / "late.pid"
    owner = subprocess.run(
        [sys.executable, "-c", RESPAWNER, str(out)], capture_output=True, text=True, timeout=60
    )
    assert owner.returncode == 0, owner.stderr
    late = identity(int(out.read_text()))
    try:
        assert all_gone({late}, 5.0), "the child started on SIGTERM outlived the scope"
        assert not running(identity(int(owner.stdout.split()[0])))
    finally:
        kill_left({late})


# A grandchild whose parent exits at once (as a Ray worker whose raylet dies with the driver):
# orphaned before the guardian could see it in the tree, found by the scope's token.
ORPHANER = """
import subprocess, sys, time
from risingbandits.integrations.lifetime import ProcessGuard
with ProcessGuard(poll_seconds=60, grace_seconds=1.0):
    out = subprocess.run(["sh", "-c", "sleep 306 > /dev/null 2>&1 & echo $!"],
                         capture_output=True, text=True).stdout
    print(out.strip(), flush=True)
    time.sleep(300)
"""


def test_a_process_orphaned_before_any_scan_ends_with_the_killed_owner() -> None:
    owner = subprocess.Popen([sys.executable, "-c", ORPHANER], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    orphan = identity(int(owner.stdout.readline()))
    try:
        assert running(orphan)
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
        assert all_gone({orphan}, 5.0), "the orphan outlived its killed owner"
    finally:
        kill_left({orphan})


def test_the_scope_token_is_in_the_environment_only_inside_it() -> None:
    before = os.environ.get("RISINGBANDITS_SCOPES")
    with ProcessGuard(), ProcessGuard():
        tokens = os.environ["RISINGBANDITS_SCOPES"].split(",")
        assert len(tokens) == len(set(tokens)) == 2 + len(before.split(",") if before else [])
    assert os.environ.get("RISINGBANDITS_SCOPES") == before


def test_a_guard_used_outside_its_scope_says_so() -> None:
    with pytest.raises(RuntimeError, match="context manager"):
        ProcessGuard().add_group(os.getpid())


FOLDER_OWNER = """
import sys, tempfile, time
from pathlib import Path
from risingbandits.integrations.lifetime import ProcessGuard
with ProcessGuard(poll_seconds=60, grace_seconds=1.0) as guard:
    folder = Path(tempfile.mkdtemp(dir=sys.argv[1]))
    (folder / "sub").mkdir()
    (folder / "sub" / "file").write_text("kept until the scope ends")
    guard.remove_at_end(folder)
    guard.scan()  # the guardian has read every line before
    print(folder, flush=True)
    if sys.argv[2] == "wait":
        time.sleep(300)
"""


@pytest.mark.parametrize("end", ["close", "wait"])
def test_a_folder_given_to_the_guard_is_removed_at_the_end_also_when_the_owner_is_killed(
    tmp_path: Path, end: str
) -> None:
    """A Ray instance's files (``local_ray``): the guardian removes them after the processes,
    when the scope ends ("close") or when its owner is killed with SIGKILL ("wait")."""
    owner = subprocess.Popen(
        [sys.executable, "-c", FOLDER_OWNER, str(tmp_path), end], stdout=subprocess.PIPE, text=True
    )
    try:
        assert owner.stdout is not None
        folder = Path(owner.stdout.readline().strip())
        assert folder.parent == tmp_path
        if end == "wait":
            assert (folder / "sub" / "file").exists()
            os.kill(owner.pid, signal.SIGKILL)
        owner.wait(timeout=30)
        deadline = time.monotonic() + 10.0
        while folder.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not folder.exists() and tmp_path.is_dir()
    finally:
        owner.kill()
        owner.wait()


def test_a_folder_path_with_a_newline_is_refused() -> None:
    with ProcessGuard() as guard, pytest.raises(ValueError, match="without newlines"):
        guard.remove_at_end("/tmp/a\nb")
