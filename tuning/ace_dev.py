"""ACE-UCB on the development instances only: the numbers of docs/ace-ucb-tuning.md.

Usage:
    python tuning/ace_dev.py                                # ACE-UCB's defaults
    python tuning/ace_dev.py --params '{"eta": 0.03}'       # a variant
    python tuning/ace_dev.py --out tuning-out               # where the baselines are cached

Development sets (fixed before any tuning; the held-out sets of ``risingbandits reproduce
heldout`` are never read here):

* LTF: ``ltf-v1`` generator seed 0, instances 0-59, T = 10k / 30k / 50k, one seed;
* Concave: ``concave-v1`` generator seed 0, instances 0-59, same T;
* IMDB: 20 instances of 7 arms drawn (generator 12345) from the 22 curves that are not among
  the paper's 7 arms, Bernoulli rewards, 3 seeds, same T;
* LCDB: ``lcdb-v1`` split ``dev`` (71 instances), budgets 0.2 / 0.6 / 1.0 x each full horizon.

Each cell's score is the mean regret per 10,000 pulls; the ratio is ACE-UCB's score over the best
baseline's in that cell (the paper's ten with the setting's preset, the ``imdb`` preset on LCDB,
and UCB1). Baselines are computed once and cached in ``--out``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from operator import methodcaller
from pathlib import Path

import numpy as np

import risingbandits as rb
from risingbandits.experiments.store import atomic_write
from risingbandits.instances.families import (
    IMDB_ARMS,
    default_curves_dir,
    family_instance,
    read_curves,
)
from risingbandits.instances.lcdb import lcdb_v1_members
from risingbandits.reproduce.settings import PAPER_POLICIES

BASELINES = (*PAPER_POLICIES, "ucb1")
SETTINGS = {"ltf": "ltf", "concave": "concave", "imdb": "imdb", "lcdb": "imdb"}  # -> preset
SEEDS = {"ltf": 1, "concave": 1, "imdb": 3, "lcdb": 1}
Cell = tuple[rb.RisingInstance, tuple[int, int, int]]


def imdb_dev(count: int = 20, arms: int = 7) -> Iterator[Cell]:
    with np.load(default_curves_dir() / "curves.npz") as data:
        others = sorted(a for a in data.files if a not in IMDB_ARMS)
    rng = np.random.default_rng(12345)
    for j in range(count):
        names = tuple(sorted(rng.choice(others, arms, replace=False).tolist()))
        table, _ = read_curves(arms=names)
        noise = rb.Noise("bernoulli")
        instance = rb.from_means(
            table, noise, name=f"imdb-dev/{j}", arm_names=names, require_rising=False
        )
        yield instance, (10_000, 30_000, 50_000)


def cells(setting: str) -> Iterator[Cell]:
    if setting in ("ltf", "concave"):
        for j in range(60):
            yield family_instance(f"{setting}-v1", j, 0, 50_000), (10_000, 30_000, 50_000)
    elif setting == "imdb":
        yield from imdb_dev()
    else:
        for j, member in enumerate(lcdb_v1_members(0, {"split": "dev"})):
            full = member["full_horizon"]
            instance = family_instance("lcdb-v1", j, 0, full, split="dev")
            yield instance, (int(0.2 * full), int(0.6 * full), full)


def scores(policy: rb.Policy, setting: str) -> list[float]:
    """Mean regret per 10,000 pulls at the three budget levels."""
    per_level: list[list[float]] = [[], [], []]
    for instance, horizons in cells(setting):
        for k, horizon in enumerate(horizons):
            result = rb.simulate(instance, policy, horizon, SEEDS[setting])
            per_level[k] += (result.regret / horizon * 1e4).tolist()
    return [float(np.mean(x)) for x in per_level]


def checked(table: object) -> dict[str, dict[str, list[float]]]:
    """The kept baselines, every field checked (they are read back from ``--out``): each
    setting, each baseline, three finite numbers."""
    damaged = SystemExit("ace-dev-baselines.json is damaged or from another version; delete it")
    if not isinstance(table, dict) or set(table) != set(SETTINGS):
        raise damaged
    for named in table.values():
        if not isinstance(named, dict) or set(named) != set(BASELINES):
            raise damaged
        for three in named.values():
            if not isinstance(three, list) or len(three) != 3:
                raise damaged
            if not all(isinstance(x, float) and np.isfinite(x) for x in three):
                raise damaged
    return table


def baselines(out: Path) -> dict[str, dict[str, list[float]]]:
    path = out / "ace-dev-baselines.json"
    if path.is_file():
        return checked(json.loads(path.read_text()))
    table = {
        setting: {
            name: scores(rb.make_policy(name, **({} if name == "ucb1" else {"preset": p})), setting)
            for name in BASELINES
        }
        for setting, p in SETTINGS.items()
    }
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(table, indent=1).encode()
    atomic_write(path, methodcaller("write", text))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--params", default="{}", help="ACE-UCB parameters (JSON)")
    parser.add_argument("--out", type=Path, default=Path("tuning-out"))
    args = parser.parse_args()
    base = baselines(args.out)
    policy = rb.make_policy("ace-ucb", **json.loads(args.params))
    ratios = []
    print(f"{policy!r}\nsetting   ACE-UCB per 10k pulls (best baseline) ratio, at 3 budgets")
    for setting in SETTINGS:
        ours = scores(policy, setting)
        row = []
        for k in range(3):
            name, best = min(((n, v[k]) for n, v in base[setting].items()), key=lambda x: x[1])
            ratios.append(ours[k] / best)
            row.append(f"{ours[k]:6.0f} ({name} {best:.0f}) {ours[k] / best:.2f}")
        print(f"{setting:8s}  " + " | ".join(row))
    print(f"max ratio {max(ratios):.2f}, mean {np.mean(ratios):.2f}")


if __name__ == "__main__":
    main()
