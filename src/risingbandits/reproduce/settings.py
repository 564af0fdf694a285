"""The sweeps that reproduce the paper's experiments, at full and quick size (DECISIONS.md
rows 14-17).

Every sweep is an engine spec (TOML text, kept in its store's manifest), so a reproduction is
resumable and each store says exactly what it ran. All sweeps use sweep seed 0, so the runs of one
instance get the same rewards in every store (common random numbers): a CURE-UCB variant of a
sensitivity store is paired, unit by unit, with the baselines of the main store.

Choices where the brief leaves one: the intro setting has 50 seeds per horizon at full size (the
paper's Figure 1 does not say; 50 gives 95% intervals of a few percent) and runs all ten
policies with their "ltf" presets (Figure 1 shows three of them); the noise sensitivity sweeps
use T in {10,000, 30,000, 50,000} (the rank horizons) to save time; the CURE-UCB sigma variants
(x0.1 and x10 the preset's sigma) run on LTF and on Concave.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from risingbandits.policies import make_policy

PAPER_POLICIES = (
    "cure-ucb",
    "red-ucb",
    "et-swgts",
    "ti-ucb",
    "red-ae",
    "sw-ucb",
    "sw-kl-ucb",
    "sw-ts",
    "rexp3",
    "ser4",
)
"""The ten policies of the paper's Section 6, in its order."""
RISING_BASELINES = ("red-ucb", "et-swgts", "ti-ucb", "red-ae")
NONSTATIONARY_BASELINES = ("sw-ucb", "sw-kl-ucb", "sw-ts", "rexp3", "ser4")
FIGURE1_POLICIES = ("cure-ucb", "red-ucb", "sw-ucb")

FULL_HORIZONS = tuple(range(5_000, 50_001, 5_000))
QUICK_HORIZONS = (5_000, 10_000, 30_000, 50_000)
RANK_HORIZONS = (10_000, 30_000, 50_000)
"""Average ranks and win rates are reported at these horizons (DECISIONS.md row 16)."""
SWEEP_SEED = 0
GENERATOR_SEED = 0

NOISE_LEVELS = ("none", "gaussian:0.05", "gaussian:0.1", "gaussian:0.2", "bernoulli")
"""The noise sensitivity panel on LTF; gaussian:0.1 is the main ``ltf`` sweep."""
MAIN_NOISE = "gaussian:0.1"
SIGMA_FACTORS = (0.1, 10.0)
IMDB_SIGMA = 0.5  # the sub-Gaussian proxy of Bernoulli rewards


@dataclass(frozen=True)
class Size:
    """How big a reproduction is."""

    name: str
    horizons: tuple[int, ...]
    intro_seeds: int
    instances: int
    imdb_runs: int
    sensitivity_horizons: tuple[int, ...]
    dominance_instances: int


FULL = Size("full", FULL_HORIZONS, 50, 100, 30, RANK_HORIZONS, 1_000)
QUICK = Size("quick", QUICK_HORIZONS, 5, 6, 3, (10_000, 50_000), 40)
SIZES = {s.name: s for s in (FULL, QUICK)}


@dataclass(frozen=True)
class PolicyEntry:
    """A policy of a sweep: registry name, preset, parameter overrides, label."""

    name: str
    preset: str
    params: tuple[tuple[str, float], ...] = ()

    @property
    def label(self) -> str:
        if not self.params:
            return self.name
        return self.name + "".join(f"[{k}={v:g}]" for k, v in self.params)


@dataclass(frozen=True)
class SweepDef:
    """One sweep of a reproduction: its name (the store is ``OUT/<name>-<size>``) and spec."""

    name: str
    title: str
    source: str
    """The ``[[instances]]`` table (TOML lines)."""
    policies: tuple[PolicyEntry, ...]
    horizons: tuple[int, ...]
    seeds: int
    noise: str | None = None

    def store_name(self, size: Size) -> str:
        return f"{self.name}-{size.name}"

    def spec_text(self, size: Size) -> str:
        """The engine spec (TOML) of this sweep."""
        lines = [
            f"# risingbandits reproduce: {self.title} ({size.name} size)",
            f'description = "reproduce {self.name} ({size.name}): {self.title}"',
            f"sweep_seed = {SWEEP_SEED}",
            f"seeds = {self.seeds}",
            f"horizons = [{', '.join(str(h) for h in self.horizons)}]",
        ]
        if self.noise is not None:
            lines.append(f'noise = "{self.noise}"')
        lines += ["", "[[instances]]", self.source]
        for p in self.policies:
            lines += ["", "[[policies]]", f'name = "{p.name}"', f'preset = "{p.preset}"']
            if p.params:
                inner = ", ".join(f"{k} = {v!r}" for k, v in p.params)
                lines += [f"params = {{ {inner} }}", f'label = "{p.label}"']
        return "\n".join(lines) + "\n"


def _family(name: str, count: int) -> str:
    return f'family = "{name}"\ncount = {count}\ngenerator_seed = {GENERATOR_SEED}'


def paper_policies(preset: str) -> tuple[PolicyEntry, ...]:
    return tuple(PolicyEntry(name, preset) for name in PAPER_POLICIES)


def default_sigma(name: str, preset: str) -> float:
    """The sigma of policy ``name`` in ``preset`` (0.1 in every preset, DECISIONS.md row 4)."""
    return float(make_policy(name, preset).params["sigma"])


def sigma_variants(name: str, preset: str) -> tuple[PolicyEntry, ...]:
    base = default_sigma(name, preset)
    return tuple(PolicyEntry(name, preset, (("sigma", base * f),)) for f in SIGMA_FACTORS)


def noise_slug(noise: str) -> str:
    return noise.removeprefix("gaussian:")


@cache
def sweeps(size: Size) -> dict[str, SweepDef]:
    """Every sweep of a reproduction at ``size``, by name."""
    n, hs, sens = size.instances, size.horizons, size.sensitivity_horizons
    defs = [
        SweepDef(
            "intro",
            "Figure 1: the two-arm intro instance",
            'named = "intro"',
            paper_policies("ltf"),
            hs,
            size.intro_seeds,
        ),
        SweepDef(
            "ltf", "Figure 4: Linear-Then-Flat", _family("ltf-v1", n), paper_policies("ltf"), hs, 1
        ),
        SweepDef(
            "concave",
            "Figure 5: Concave",
            _family("concave-v1", n),
            paper_policies("concave"),
            hs,
            1,
        ),
        SweepDef(
            "imdb",
            "Figures 6-7: IMDB online model selection",
            _family("imdb-v1", 1),
            paper_policies("imdb"),
            hs,
            size.imdb_runs,
        ),
    ]
    for noise in NOISE_LEVELS:
        if noise != MAIN_NOISE:
            defs.append(
                SweepDef(
                    f"ltf-noise-{noise_slug(noise)}",
                    f"sensitivity: LTF with noise {noise}",
                    _family("ltf-v1", n),
                    paper_policies("ltf"),
                    sens,
                    1,
                    noise,
                )
            )
    for setting, family in (("ltf", "ltf-v1"), ("concave", "concave-v1")):
        defs.append(
            SweepDef(
                f"{setting}-cure-sigma",
                f"sensitivity: CURE-UCB sigma x0.1 and x10 on {setting}",
                _family(family, n),
                sigma_variants("cure-ucb", setting),
                hs,
                1,
            )
        )
    imdb_sigma = tuple(
        PolicyEntry(name, "imdb", (("sigma", IMDB_SIGMA),)) for name in ("cure-ucb", "red-ucb")
    )
    defs.append(
        SweepDef(
            "imdb-sigma",
            f"sensitivity: CURE-UCB and R-ed-UCB with sigma = {IMDB_SIGMA:g} on IMDB",
            _family("imdb-v1", 1),
            imdb_sigma,
            hs,
            size.imdb_runs,
        )
    )
    return {d.name: d for d in defs}


SENSITIVITY_SWEEPS = (
    *(f"ltf-noise-{noise_slug(x)}" for x in NOISE_LEVELS if x != MAIN_NOISE),
    "ltf-cure-sigma",
    "concave-cure-sigma",
    "imdb-sigma",
)
TARGETS: dict[str, tuple[str, ...]] = {
    "intro": ("intro",),
    "ltf": ("ltf",),
    "concave": ("concave",),
    "imdb": ("imdb",),
    "sensitivity": ("ltf", "concave", "imdb", *SENSITIVITY_SWEEPS),
    "theory": (),
    "all": ("intro", "ltf", "concave", "imdb", *SENSITIVITY_SWEEPS),
}
"""The sweeps each ``reproduce`` target runs (``sensitivity`` needs the main sweeps it is
compared with; ``theory`` runs no sweep, only the exact checks)."""
THEORY_TARGETS = ("intro", "theory", "all")
"""Targets that also run the theory checks (the dominance search, Section 3.1's price)."""


def check_target(target: str) -> str:
    if target not in TARGETS:
        raise ValueError(f"target={target!r} is not allowed: use one of {', '.join(TARGETS)}")
    return target


def target_sweeps(target: str, size: Size) -> list[SweepDef]:
    defs = sweeps(size)
    return [defs[name] for name in TARGETS[check_target(target)]]


def display_name(label: str, reconstruction: Sequence[str]) -> str:
    """A label with ``*`` for a reconstruction (TI-UCB, R-ed-AE)."""
    base = label.split("[", 1)[0]
    return label.replace(base, base + "*", 1) if base in reconstruction else label
