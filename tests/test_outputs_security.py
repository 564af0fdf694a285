"""Output folders another local user could write are refused, and files are written into them
without following anything planted there: an audit had a results folder owned by another user
(the default names are relative, so guessable) where ``manifest.json.tmp`` was a symbolic link
to the victim's ``~/.bashrc``, which the sweep overwrote with its manifest."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from operator import methodcaller
from pathlib import Path

import pytest
from typer.testing import CliRunner

import risingbandits.cli.demo as demo_cli
from risingbandits.cli import app
from risingbandits.experiments import Store, make_plan, parse_spec, run_sweep
from risingbandits.outputs import atomic_write, writable_dir
from test_experiments_spec import TINY

runner = CliRunner()
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
OTHER = 4242  # a uid that is not ours


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def open_to_all(folder: Path) -> Path:
    folder.mkdir()
    folder.chmod(0o777)  # as an attacker's folder would be (no sticky bit)
    return folder


def test_an_output_folder_others_can_write_is_refused_in_one_line(tmp_path: Path) -> None:
    shared = open_to_all(tmp_path / "shared")
    with pytest.raises(ValueError) as info:
        writable_dir(shared)
    assert str(info.value) == (
        f"--out={str(shared)!r} is not allowed: {shared} can be written by others "
        f"(mode 777; chmod o-w {shared} if it is yours)"
    )
    with pytest.raises(ValueError, match=r"^--out='.*/shared/new' is not allowed: .*/shared can "):
        writable_dir(shared / "new")  # another user could rename it and put theirs in its place


def test_a_sticky_parent_is_fine_but_not_a_sticky_output_folder(tmp_path: Path) -> None:
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)  # like /tmp: only an entry's owner may move it
    assert writable_dir(sticky / "mine") == sticky / "mine"
    with pytest.raises(ValueError, match="can be written by others"):
        writable_dir(sticky)  # anyone may add files (parts read back as results) there


@AS_ROOT
def test_another_users_output_folder_or_link_is_refused(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, OTHER, OTHER)
    with pytest.raises(
        ValueError,
        match=rf"^--out='.*theirs' is not allowed: .*belongs to another user \(uid {OTHER}\)$",
    ):
        writable_dir(theirs)
    mine = tmp_path / "mine"
    mine.mkdir()
    link = tmp_path / "link"
    link.symlink_to(mine)
    os.lchown(link, OTHER, OTHER)
    with pytest.raises(
        ValueError,
        match=rf"is a symbolic link of another user \(uid {OTHER}\), who could re-point it$",
    ):
        writable_dir(link)


def test_the_group_may_write_an_output_folder_and_those_above(tmp_path: Path, umask: None) -> None:
    os.umask(0o002)  # the default of many desktop systems (a private group per user)
    out = writable_dir(tmp_path / "a" / "b")
    assert stat.S_IMODE(out.stat().st_mode) == stat.S_IMODE(out.parent.stat().st_mode) == 0o775
    assert writable_dir(out) == out


def test_a_planted_link_at_the_old_temporary_name_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "bashrc"
    victim.write_text("alias ls='ls --color'\n")
    out = tmp_path / "sweep"
    out.mkdir()
    (out / "manifest.json.tmp").symlink_to(victim)
    spec = parse_spec(TINY)
    Store(out).create(spec, make_plan(spec, 800))
    assert victim.read_text() == "alias ls='ls --color'\n"
    assert Store(out).manifest().spec_hash == spec.hash
    assert not (out / "manifest.json").is_symlink()


def test_a_link_at_the_temporary_name_fails_the_write_and_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Were the random name guessed, the file is still created exclusively (never through a
    link), and what was there is not removed: it is not ours."""
    monkeypatch.setattr("risingbandits.outputs.secrets.token_hex", lambda n: "guessed")
    victim = tmp_path / "victim"
    victim.write_bytes(b"mine")
    link = tmp_path / ".report.md.guessed.tmp"
    link.symlink_to(victim)
    with pytest.raises(FileExistsError) as info:
        atomic_write(tmp_path / "report.md", methodcaller("write", b"report"))
    assert info.value.filename == str(tmp_path / "report.md")
    assert victim.read_bytes() == b"mine" and link.is_symlink()
    assert not (tmp_path / "report.md").exists()


def test_a_written_file_gets_the_mode_the_umask_gives(tmp_path: Path, umask: None) -> None:
    os.umask(0o027)
    atomic_write(tmp_path / "table.json", methodcaller("write", b"{}"))
    assert stat.S_IMODE((tmp_path / "table.json").stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["table.json"]


def test_a_sweep_into_a_folder_others_can_write_is_refused_before_reading_it(
    tmp_path: Path,
) -> None:
    shared = open_to_all(tmp_path / "shared")
    (shared / "manifest.json").symlink_to(tmp_path / "nowhere")
    with pytest.raises(
        ValueError, match=r"^out='.*shared' is not allowed: .*can be written by others"
    ):
        run_sweep(parse_spec(TINY), shared, executor="serial")
    assert sorted(p.name for p in shared.iterdir()) == ["manifest.json"]


def test_the_demo_refuses_a_folder_others_can_write_before_computing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_computing(*args: object, **kwargs: object) -> None:
        raise AssertionError("demo computed before checking --out")

    monkeypatch.setattr(demo_cli, "simulate_horizons", no_computing)
    shared = open_to_all(tmp_path / "shared")
    result = runner.invoke(app, ["demo", "--out", str(shared), "--seeds", "2"])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: --out={str(shared)!r} is not allowed: {shared} can be written")
    assert list(shared.iterdir()) == []


def test_a_report_into_a_folder_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = open_to_all(tmp_path / "shared")
    result = runner.invoke(app, ["reproduce", "intro", "--report-only", "--out", str(shared)])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: --out={str(shared)!r} is not allowed: {shared} can be written")
