"""Cache folders: only one this user owns and nobody else can write is used (Numba unpickles
its kernel index; a folder another local user can write would run their code here)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from risingbandits import _jit, user_cache
from risingbandits.user_cache import NotPrivate, check_private, private_dir


@pytest.fixture
def fresh_cache_dir() -> Iterator[None]:
    _jit.cache_dir.cache_clear()
    yield
    _jit.cache_dir.cache_clear()


@pytest.fixture
def no_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user cache cannot be written (its root lies under a file); TMPDIR is ``tmp/t``."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("RISINGBANDITS_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.delenv("RISINGBANDITS_NO_JIT_CACHE", raising=False)
    monkeypatch.delenv("RISINGBANDITS_NOTICES_SHOWN", raising=False)
    tmp = tmp_path / "t"
    tmp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(tmp))
    return tmp


def _plant(folder: Path) -> Path:
    """A kernel folder another user prepared: world-writable, with an index file in it."""
    kernels = folder / "numba" / _jit.source_hash()
    kernels.mkdir(parents=True)
    for path in (folder, folder / "numba", kernels):
        path.chmod(0o777)
    (kernels / "planted.nbi").write_bytes(b"not a real index")
    return kernels


def test_a_world_writable_temporary_cache_is_never_used(
    no_user_cache: Path, fresh_cache_dir: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old fallback, ``$TMPDIR/risingbandits-cache``, was used whoever made it."""
    _plant(no_user_cache / "risingbandits-cache")
    _plant(no_user_cache / f"risingbandits-cache-{os.getuid()}")
    assert _jit.cache_dir() is None
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "compiled kernels will not be cached" in err
    assert "can be written by group or others" in err


def test_a_cache_of_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_cache_dir: None
) -> None:
    monkeypatch.setenv("RISINGBANDITS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("RISINGBANDITS_NO_JIT_CACHE", raising=False)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    (tmp_path / "cache").mkdir(mode=0o700)
    monkeypatch.setattr(user_cache.os, "getuid", lambda: os.geteuid() + 1)
    monkeypatch.setenv("RISINGBANDITS_NOTICES_SHOWN", "no-kernel-cache")  # quiet
    assert _jit.cache_dir() is None  # neither the user cache nor the temporary one is "ours"


def test_the_temporary_fallback_is_private_and_reused(
    no_user_cache: Path, fresh_cache_dir: None
) -> None:
    path = _jit.cache_dir()
    assert path == no_user_cache / f"risingbandits-cache-{os.getuid()}" / "numba" / (
        _jit.source_hash()
    )
    for folder in (path, path.parent, path.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    _jit.cache_dir.cache_clear()
    assert _jit.cache_dir() == path


def test_private_dir_creates_0700_under_any_umask(tmp_path: Path) -> None:
    old = os.umask(0o002)
    try:
        made = private_dir(tmp_path / "root", "a", "b")
    finally:
        os.umask(old)
    for folder in (made, made.parent, made.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_check_private_names_the_problem(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o775)
    with pytest.raises(NotPrivate, match=r"loose can be written by group or others \(mode 775"):
        check_private(loose)
    a_file = tmp_path / "f"
    a_file.write_text("")
    with pytest.raises(NotPrivate, match="is not a folder"):
        check_private(a_file)


def test_a_cache_reached_through_a_symbolic_link_is_used_by_its_real_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_cache_dir: None
) -> None:
    """The link's owner (another user, in a shared folder) could re-point it at a folder of
    theirs after the check; Numba would then read their index files."""
    real = tmp_path / "mine"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    monkeypatch.setenv("RISINGBANDITS_CACHE_DIR", str(link))
    monkeypatch.delenv("RISINGBANDITS_NO_JIT_CACHE", raising=False)
    path = _jit.cache_dir()
    assert path == real / "numba" / _jit.source_hash()
    with pytest.raises(NotPrivate, match="is a symbolic link"):
        check_private(link)


@pytest.mark.parametrize(
    "mode, used", [(0o777, False), (0o770, False), (0o1777, True)], ids=["777", "770", "1777"]
)
def test_a_cache_in_a_folder_others_can_write_is_used_only_if_it_is_sticky(
    tmp_path: Path, mode: int, used: bool
) -> None:
    """Without the sticky bit, another user may rename the cache folder away and put theirs."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(mode)
    if used:
        assert private_dir(shared / "cache", "numba") == shared / "cache" / "numba"
    else:
        with pytest.raises(NotPrivate, match=r"shared can be written by group or others .* who"):
            private_dir(shared / "cache", "numba")


def test_a_group_writable_user_cache_falls_back_to_the_private_temporary_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_cache_dir: None
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o770)
    monkeypatch.setenv("RISINGBANDITS_CACHE_DIR", str(shared))
    monkeypatch.delenv("RISINGBANDITS_NO_JIT_CACHE", raising=False)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    path = _jit.cache_dir()
    assert path is not None and path.is_relative_to(tmp_path / f"risingbandits-cache-{os.getuid()}")
    assert not (shared / "numba").exists()


def test_the_notice_is_one_line_once_for_a_process_and_its_children(tmp_path: Path) -> None:
    code = (
        "import subprocess, sys\n"
        "from risingbandits import _jit\n"
        "_jit.cache_dir(); _jit.cache_dir.cache_clear(); _jit.cache_dir()\n"
        "subprocess.run([sys.executable, '-c', 'from risingbandits import _jit; _jit.cache_dir()'])"
    )
    blocker = tmp_path / f"risingbandits-cache-{os.getuid()}"
    blocker.write_text("")  # the temporary fallback cannot be made either
    env = {
        **os.environ,
        "RISINGBANDITS_CACHE_DIR": str(blocker / "cache"),
        "TMPDIR": str(tmp_path),
    }
    env.pop("RISINGBANDITS_NOTICES_SHOWN", None)
    env.pop("RISINGBANDITS_NO_JIT_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("compiled kernels will not be cached") == 1
    assert done.stderr.startswith("risingbandits: compiled kernels will not be cached (")
