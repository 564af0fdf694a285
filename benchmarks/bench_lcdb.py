"""Load time of the whole lcdb-v1 family: every instance at its full horizon.

Usage:
    python benchmarks/bench_lcdb.py            # needs pip install "risingbandits[lcdb]"

Each measurement runs in a fresh Python process (imports included) that builds all instances
of lcdb-v1 (split ``all``, seed 0) at their own ``full_horizon``:

* cold: an empty cache directory, so the process parses lcdb's 150 MB CSV and writes the
  parsed table to the cache;
* warm: the same cache directory again (target: < 10 s), and then a second load within that
  process (the parsed table is kept in memory).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import json, time
start = time.perf_counter()
from risingbandits.instances.families import family_instance
from risingbandits.instances.lcdb import lcdb_v1_members

def load():
    t0 = time.perf_counter()
    members = lcdb_v1_members(0, {})
    insts = [family_instance("lcdb-v1", j, 0, m["full_horizon"]) for j, m in enumerate(members)]
    return insts, time.perf_counter() - t0

insts, first = load()
total = time.perf_counter() - start
_, again = load()
cells = sum(x.means.size for x in insts)
print(json.dumps({"instances": len(insts), "pulls": sum(x.max_horizon for x in insts),
                  "mb": 2 * 8 * cells / 1e6, "total_s": total, "load_s": first,
                  "again_s": again}))
"""


def _run(cache: Path) -> dict[str, float]:
    env = {**os.environ, "RISINGBANDITS_CACHE_DIR": str(cache)}
    env.pop("RISINGBANDITS_LCDB_DIR", None)
    out = subprocess.run(
        [sys.executable, "-c", CHILD],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return dict(json.loads(out.stdout))


def main() -> None:
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, {platform.processor()}")
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        for label in ("cold", "warm", "warm"):
            r = _run(cache)
            print(
                f"{label}: {r['total_s']:.2f} s in a fresh process (imports included; building "
                f"{r['load_s']:.2f} s), second load in the same process {r['again_s']:.2f} s; "
                f"{r['instances']:.0f} instances, {r['pulls']:,.0f} pulls in all, "
                f"{r['mb']:.0f} MB of tables"
            )


if __name__ == "__main__":
    main()
