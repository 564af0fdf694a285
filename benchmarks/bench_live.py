"""Cost of the live-training family live-v1: recording one task per data set, and loading the
whole family from the cache.

Usage:
    python benchmarks/bench_live.py             # load time (needs `risingbandits data live`)
    python benchmarks/bench_live.py --record    # also record one task per data set (slow)

* record: data-order seed 0 of every data set, 1,024 units, in this process (one core, as one
  worker of the build does), into a temporary cache; the whole family is 8 such tasks per data
  set spread over the cores;
* load: every instance of live-v1 (split ``all``, seed 0) at the full horizon, in a fresh
  process, imports included.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, time
start = time.perf_counter()
from risingbandits.instances.families import family_size, generate
insts = generate("live-v1", family_size("live-v1"), horizon=1024)
print(json.dumps({"instances": len(insts), "load_s": time.perf_counter() - start}))
"""


def record() -> dict[str, float]:
    from risingbandits.instances.live import DATASETS
    from risingbandits.instances.live_build import record_task

    seconds = {}
    for dataset in DATASETS:
        start = time.perf_counter()
        record_task(dataset, 0)
        seconds[dataset] = round(time.perf_counter() - start, 1)
    return seconds


def main() -> None:
    out: dict[str, object] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    if "--record" in sys.argv:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["RISINGBANDITS_CACHE_DIR"] = tmp
            out["record_s"] = record()
        os.environ.pop("RISINGBANDITS_CACHE_DIR")
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, timeout=600
    )
    out["load"] = json.loads(done.stdout)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
