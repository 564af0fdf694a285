"""Wall time of ``risingbandits reproduce``: the paper's LTF + Concave at full size,
``reproduce all --quick`` with a warm and a cold Numba cache, and ``reproduce all`` at full size
cold and warm (issue 10's target: under 5 minutes on 2 cores).

Usage:
    python benchmarks/bench_reproduce.py                   # quick and full (not all)
    python benchmarks/bench_reproduce.py --part quick      # only all --quick (warm, cold)
    python benchmarks/bench_reproduce.py --part full --keep results/reproduction
    python benchmarks/bench_reproduce.py --part all        # reproduce all, full size (~10 min)

Every measurement is the ``risingbandits reproduce`` command in a fresh process, into a fresh
directory (so nothing is resumed), on all cores. "Warm" means the compiled kernels are already
in the on-disk cache (the warm-up run puts them there); "cold" points ``RISINGBANDITS_CACHE_DIR``
at an empty directory, so every worker compiles every kernel it runs (for ``--part all`` that
directory links to the recorded live-v1 curves of the user cache: issue 20's target is "with
the live-v1 tables cached"; without them the live-v1 sweeps are skipped).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from risingbandits.user_cache import user_cache_root

CLI = "from risingbandits.cli import main; main()"


def command(args: list[str], env: dict[str, str] | None = None) -> float:
    """Seconds of one ``risingbandits`` command in a fresh process (fails loudly)."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", CLI, *args],
        check=True,
        capture_output=True,
        env={**os.environ, **(env or {})},
    )
    return time.perf_counter() - start


def quick(base: Path) -> None:
    command(["reproduce", "all", "--quick", "--out", str(base / "warm-up")])
    warm = command(["reproduce", "all", "--quick", "--out", str(base / "warm")])
    again = command(["reproduce", "all", "--quick", "--out", str(base / "warm")])
    cold_cache = {"RISINGBANDITS_CACHE_DIR": str(base / "empty-cache")}
    cold = command(["reproduce", "all", "--quick", "--out", str(base / "cold")], cold_cache)
    print(f"reproduce all --quick, warm cache : {warm:6.1f} s")
    print(f"reproduce all --quick, cold cache : {cold:6.1f} s")
    print(f"the same again (nothing to run)   : {again:6.1f} s (figures and report only)")


def full(base: Path) -> None:
    out = str(base / "full")
    command(["reproduce", "intro", "--quick", "--out", str(base / "warm-up-full")])  # compile
    ltf = command(["reproduce", "ltf", "--out", out])
    concave = command(["reproduce", "concave", "--out", out])
    print(f"reproduce ltf (full)              : {ltf:6.1f} s")
    print(f"reproduce concave (full)          : {concave:6.1f} s")
    print(f"ltf + concave                     : {ltf + concave:6.1f} s (target <= 600 s)")


def full_all(base: Path) -> None:
    cold_cache = {"RISINGBANDITS_CACHE_DIR": str(base / "empty-cache-all")}
    live = user_cache_root() / "live"  # the target counts live-v1 as recorded
    if live.is_dir():
        (base / "empty-cache-all").mkdir(mode=0o700)
        (base / "empty-cache-all" / "live").symlink_to(live)
    cold = command(["reproduce", "all", "--out", str(base / "all-cold")], cold_cache)
    warm = command(["reproduce", "all", "--out", str(base / "all-warm")], cold_cache)
    print(f"reproduce all (full), cold cache  : {cold:6.1f} s (target < 300 s)")
    print(f"reproduce all (full), warm cache  : {warm:6.1f} s (target < 300 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("quick", "full", "both", "all"), default="both")
    parser.add_argument("--keep", type=Path, help="Write into this (empty) directory, keep it.")
    args = parser.parse_args()
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)
        if args.part in ("quick", "both"):
            quick(base)
        if args.part in ("full", "both"):
            full(base)
        if args.part == "all":
            full_all(base)


if __name__ == "__main__":
    main()
