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
(x0.1 and x10 the preset's sigma) run on LTF and on Concave. Concave runs on both concave-v1
(the paper's generator read literally, the main sweep) and concave-v2 (its late bloomer always
the best fixed arm at T = 50,000). The policy variants of :data:`POLICY_VARIANTS` (the choices
the rising baselines' verdicts may hang on, issue 10) run, one sweep per setting holding only
the variant policies, on the settings whose claims read them (intro, LTF, concave-v1, IMDB),
at the main sweep's horizons and seeds, so each is paired with the default policy unit by unit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from risingbandits.instances.families import IMDB_ALL_ARMS, PAPER_HORIZON
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
EXTRA_POLICIES = (
    "successive-halving",
    "successive-rejects",
    "r-sr",
    "r-ucbe",
    "ucb1",
    "ace-ucb",
    "hace-ucb",
)
"""Compared with the ten beyond the paper: the fixed-budget methods, UCB1 and this library's
ACE-UCB and HACE-UCB (each with its defaults: none has a preset of its own, and their
parameters are frozen)."""
OWN_POLICIES = ("ace-ucb", "hace-ucb")
"""This library's own policies (drawn solid beside the paper's ten)."""
HELDOUT_POLICY = "hace-ucb"
"""The policy the held-out evaluation judges: the library's default (issue 21)."""
HELDOUT_NAME = "HACE-UCB"
RISING_BASELINES = ("red-ucb", "et-swgts", "ti-ucb", "red-ae")
NONSTATIONARY_BASELINES = ("sw-ucb", "sw-kl-ucb", "sw-ts", "rexp3", "ser4")
FIGURE1_POLICIES = ("cure-ucb", "red-ucb", "sw-ucb")

FULL_HORIZONS = tuple(range(5_000, 50_001, 5_000))
QUICK_HORIZONS = (5_000, 10_000, 30_000, 50_000)
RANK_HORIZONS = (10_000, 30_000, 50_000)
"""Average ranks and win rates are reported at these horizons (DECISIONS.md row 16)."""
SWEEP_SEED = 0
GENERATOR_SEED = 0
HELDOUT_SEED = 1
"""Generator seed of the held-out synthetic instances (seed 0 is the paper sweeps' and was seen
while ACE-UCB was developed; seed 1 was never used before the held-out evaluation)."""
BUDGET_PERCENTS = (5, 10, 20, 40, 60, 100)
"""Budgets of the model-selection target, in percent of each instance's full budget (that of
IMDB is its curves' length, 50,000 pulls: T = 2,500 to 50,000)."""
PER_ARM_BUDGETS = (4, 8, 16, 32, 64, 128)
"""Budgets per candidate m (T = K x m): where practitioners work ("8 candidates, 30 epochs")."""
HELDOUT_PERCENTS = (20, 60, 100)
"""Budgets of the held-out evaluation: T = 10,000, 30,000, 50,000 on the synthetic settings and
IMDB (full budget 50,000), the same fractions of each LCDB instance's full budget."""


def budget_horizons(percents: Sequence[int]) -> tuple[int, ...]:
    """``percents`` of the 50,000-pull budget of the synthetic and IMDB settings."""
    return tuple(p * PAPER_HORIZON // 100 for p in percents)


LCDB_PRESET = "concave"
"""Presets for LCDB: its rewards are accuracies on saturating learning curves with a small
Gaussian noise (the spread across LCDB's splits, median 0.086 at its largest), like the
concave family's Gaussian rewards; the ``imdb`` preset is for Bernoulli rewards."""

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
    lcdb_instances: int
    """lcdb-v1 test instances of the model-selection target (its first ones)."""
    lcdb_seeds: int
    """Runs of each lcdb-v1 and live-v1 instance."""
    live_instances: int
    """live-v1 test instances of the model-selection target (its first ones)."""


FULL = Size("full", FULL_HORIZONS, 50, 100, 30, RANK_HORIZONS, 1_000, 70, 10, 20)
QUICK = Size("quick", QUICK_HORIZONS, 5, 6, 3, (10_000, 50_000), 40, 8, 2, 4)
SIZES = {s.name: s for s in (FULL, QUICK)}


@dataclass(frozen=True)
class PolicyEntry:
    """A policy of a sweep: registry name, preset, parameter overrides, label."""

    name: str
    preset: str | None
    """None: the policy's defaults."""
    params: tuple[tuple[str, float | str], ...] = ()

    @property
    def label(self) -> str:
        if not self.params:
            return self.name
        return self.name + "".join(
            f"[{k}={v}]" if isinstance(v, str) else f"[{k}={v:g}]" for k, v in self.params
        )


@dataclass(frozen=True)
class PolicyVariant:
    """A parameter value of a baseline that its verdicts may depend on (docs/fidelity.md)."""

    name: str
    param: str
    value: str
    title: str

    def entry(self, preset: str) -> PolicyEntry:
        return PolicyEntry(self.name, preset, ((self.param, self.value),))

    @property
    def label(self) -> str:
        return self.entry("ltf").label


POLICY_VARIANTS = (
    PolicyVariant("ti-ucb", "detector", "slope-ratio", "TI-UCB*: first version's slope-ratio test"),
    PolicyVariant("ti-ucb", "predict_at", "round", "TI-UCB*: predicts at the round t"),
    PolicyVariant("et-swgts", "window", "pulls", "ET-SWGTS: window over the arm's pulls"),
    PolicyVariant("red-ucb", "delta_schedule", "t^-4", "R-ed-UCB: delta_t = t^-4"),
)
"""The variants the report re-judges every claim with (each standing in for its default)."""
VARIANT_SETTINGS = ("intro", "ltf", "concave", "imdb")
"""Settings the policy variants run on (those whose claims read a rising baseline)."""


@dataclass(frozen=True)
class SweepDef:
    """One sweep of a reproduction: its name (the store is ``OUT/<name>-<size>``) and spec."""

    name: str
    title: str
    source: str
    """The ``[[instances]]`` table (TOML lines)."""
    policies: tuple[PolicyEntry, ...]
    horizons: tuple[int, ...]
    """Horizons, or what ``grid`` says: percents of each instance's full horizon, or pulls per
    arm."""
    seeds: int
    noise: str | None = None
    grid: str = "horizons"
    """The spec key of ``horizons``: ``horizons``, ``horizon_percents`` or ``pulls_per_arm``."""
    optional: bool = False
    """Skipped (the report says why) when its instances cannot be read here: live-v1 is recorded
    by ``risingbandits data live`` (about 15 minutes), not shipped."""
    sweep_seed: int = SWEEP_SEED

    def store_name(self, size: Size) -> str:
        return f"{self.name}-{size.name}"

    def spec_text(self, size: Size) -> str:
        """The engine spec (TOML) of this sweep."""
        lines = [
            f"# risingbandits reproduce: {self.title} ({size.name} size)",
            f'description = "reproduce {self.name} ({size.name}): {self.title}"',
            f"sweep_seed = {self.sweep_seed}",
            f"seeds = {self.seeds}",
            f"{self.grid} = [{', '.join(str(h) for h in self.horizons)}]",
        ]
        if self.noise is not None:
            lines.append(f'noise = "{self.noise}"')
        lines += ["", "[[instances]]", self.source]
        for p in self.policies:
            lines += ["", "[[policies]]", f'name = "{p.name}"']
            if p.preset is not None:
                lines.append(f'preset = "{p.preset}"')
            if p.params:
                inner = ", ".join(f"{k} = {v!r}" for k, v in p.params)
                lines += [f"params = {{ {inner} }}", f'label = "{p.label}"']
        return "\n".join(lines) + "\n"


def _family(name: str, count: int, seed: int = GENERATOR_SEED) -> str:
    return f'family = "{name}"\ncount = {count}\ngenerator_seed = {seed}'


def paper_policies(preset: str) -> tuple[PolicyEntry, ...]:
    return tuple(PolicyEntry(name, preset) for name in PAPER_POLICIES)


def every_policy(preset: str) -> tuple[PolicyEntry, ...]:
    """The ten with ``preset``, then :data:`EXTRA_POLICIES` with their defaults."""
    return paper_policies(preset) + tuple(PolicyEntry(name, None) for name in EXTRA_POLICIES)


def default_sigma(name: str, preset: str) -> float:
    """The sigma of policy ``name`` in ``preset`` (0.1 in every preset, DECISIONS.md row 4)."""
    return float(make_policy(name, preset).params["sigma"])


def sigma_variants(name: str, preset: str) -> tuple[PolicyEntry, ...]:
    base = default_sigma(name, preset)
    return tuple(PolicyEntry(name, preset, (("sigma", base * f),)) for f in SIGMA_FACTORS)


def noise_slug(noise: str) -> str:
    return noise.removeprefix("gaussian:")


def noise_store(level: str) -> str:
    """The sweep of LTF under noise ``level``."""
    return "ltf" if level == MAIN_NOISE else f"ltf-noise-{noise_slug(level)}"


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
            "concave-v2",
            "Figure 5 on concave-v2 (late bloomer optimal)",
            _family("concave-v2", n),
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
                    noise_store(noise),
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
    defs += selection_sweeps(size) + heldout_sweeps(size) + heldout2_sweeps(size)
    defs += heldout3_sweeps(size)
    for setting in VARIANT_SETTINGS:
        main = next(d for d in defs if d.name == setting)
        preset = main.policies[0].preset
        assert preset is not None  # the main sweeps run the ten with their setting's preset
        defs.append(
            SweepDef(
                variant_store(setting),
                f"robustness: policy variants on {setting}",
                main.source,
                tuple(v.entry(preset) for v in POLICY_VARIANTS),
                main.horizons,
                main.seeds,
            )
        )
    return {d.name: d for d in defs}


def selection_sweeps(size: Size) -> list[SweepDef]:
    """Every policy on IMDB (7 and 29 learners) and on the lcdb-v1 test split, from 5% to 100%
    of each instance's full budget, and with 4 to 128 pulls per candidate (IMDB with 7 learners,
    LCDB); the same on the live-v1 test split when it is built here. The IMDB, LCDB and live
    stores also serve the held-out target."""
    all_arms = ", ".join(f'"{a}"' for a in IMDB_ALL_ARMS)
    imdb29 = SweepDef(
        "select-imdb29",
        "model selection: IMDB, all 29 learners",
        _family("imdb-v1", 1) + f"\nparams = {{ arms = [{all_arms}] }}",
        every_policy("imdb"),
        budget_horizons(BUDGET_PERCENTS),
        size.imdb_runs,
    )
    return [imdb29, *real_sweeps(size, "select", "model selection", GENERATOR_SEED, SWEEP_SEED)]


def real_sweeps(size: Size, prefix: str, title: str, draw: int, sweep_seed: int) -> list[SweepDef]:
    """Every policy on IMDB (the paper's 7 learners) and on the test splits of lcdb-v1 and
    live-v1 (live-v1 only where it is recorded), at :data:`BUDGET_PERCENTS` of each full budget
    (store ``<prefix>-<setting>``) and at :data:`PER_ARM_BUDGETS` (``<prefix>-<setting>-arm``).
    ``draw`` is the generator seed of lcdb-v1 and live-v1 (which candidates each test task
    gets), ``sweep_seed`` seeds the rewards."""
    split = '\nparams = { split = "test" }'
    seed = f" generator seed {draw}," if draw != GENERATOR_SEED else ""
    beds = (
        ("imdb", "IMDB, the paper's 7 learners", _family("imdb-v1", 1), "imdb", size.imdb_runs),
        (
            "lcdb",
            f"LCDB (lcdb-v1,{seed} test split)",
            _family("lcdb-v1", size.lcdb_instances, draw) + split,
            LCDB_PRESET,
            size.lcdb_seeds,
        ),
        (
            "live",
            f"live training (live-v1,{seed} test split)",
            _family("live-v1", size.live_instances, draw) + split,
            LCDB_PRESET,
            size.lcdb_seeds,
        ),
    )
    defs = []
    for key, bed, source, preset, runs in beds:
        shares = (
            (budget_horizons(BUDGET_PERCENTS), "horizons")
            if key == "imdb"
            else (BUDGET_PERCENTS, "horizon_percents")
        )
        for suffix, (budgets, grid), what in (
            ("", shares, ""),
            ("-arm", (PER_ARM_BUDGETS, "pulls_per_arm"), ", budgets per candidate"),
        ):
            defs.append(
                SweepDef(
                    f"{prefix}-{key}{suffix}",
                    f"{title}: {bed}{what}",
                    source,
                    every_policy(preset),
                    budgets,
                    runs,
                    grid=grid,
                    optional=key == "live",
                    sweep_seed=sweep_seed,
                )
            )
    return defs


HELDOUT_FAMILIES = {"ltf": "ltf-v1", "concave": "concave-v1", "concave-v2": "concave-v2"}
"""Held-out synthetic settings: store ``heldout-<key>``, family (the key names its preset)."""
HELDOUT2_SEED = 2
"""Generator seed of the second held-out set's synthetic instances (seeds 0 and 1 are the
development and the first held-out instances)."""
HELDOUT2_DRAW = 1
"""Generator seed of the second held-out set's lcdb-v1 and live-v1 instances: the same test
tasks as the first set (never used for development) with other candidates drawn (seed 0 is the
first set's draw)."""
HELDOUT2_SWEEP_SEED = 1
"""Sweep seed (the rewards) of the second held-out set: on IMDB, whose only curves outside
development are the paper's 7, the second set is the same 7 curves with new Bernoulli rewards."""
HELDOUT3_SEED = 3
"""Generator seed of the third held-out set's synthetic instances (made once the second set
had been read twice for decisions; tuning log, ninth pass)."""
HELDOUT3_DRAW = 2
"""Generator seed of the third held-out set's lcdb-v1 and live-v1 candidates (test tasks)."""
HELDOUT3_SWEEP_SEED = 2
"""Sweep seed of the third held-out set (on IMDB: the paper's 7 curves, new rewards again)."""


def synthetic_heldout(size: Size, prefix: str, seed: int, sweep_seed: int) -> list[SweepDef]:
    """Every policy on 100 (quick: 6) instances of each synthetic family with generator seed
    ``seed``, T = 10,000, 30,000, 50,000 (store ``<prefix>-<key>``) and 4 to 128 pulls per
    candidate (``<prefix>-<key>-arm``), the families' Gaussian noise 0.1."""
    defs = []
    for key, family in HELDOUT_FAMILIES.items():
        source = _family(family, size.instances, seed)
        policies = every_policy(key.removesuffix("-v2"))
        title = f"held-out: {family} with generator seed {seed}"
        for suffix, budgets, grid, what in (
            ("", budget_horizons(HELDOUT_PERCENTS), "horizons", ""),
            ("-arm", PER_ARM_BUDGETS, "pulls_per_arm", ", budgets per candidate"),
        ):
            defs.append(
                SweepDef(
                    f"{prefix}-{key}{suffix}",
                    title + what,
                    source,
                    policies,
                    budgets,
                    1,
                    grid=grid,
                    sweep_seed=sweep_seed,
                )
            )
    return defs


def heldout_sweeps(size: Size) -> list[SweepDef]:
    """The first held-out set's synthetic sweeps (generator seed :data:`HELDOUT_SEED`); its
    real-curve sweeps are the model-selection ones."""
    return synthetic_heldout(size, "heldout", HELDOUT_SEED, SWEEP_SEED)


def later_heldout(size: Size, prefix: str, seed: int, draw: int, sweep_seed: int) -> list[SweepDef]:
    """A held-out set made after the first (issue 21), every sweep its own: generator seed
    ``seed`` of the synthetic families, ``draw`` of lcdb-v1 and live-v1 (test splits), sweep
    seed ``sweep_seed`` (stores ``<prefix>-<setting>[-arm]``)."""
    return synthetic_heldout(size, prefix, seed, sweep_seed) + real_sweeps(
        size, prefix, "held-out", draw, sweep_seed
    )


def heldout2_sweeps(size: Size) -> list[SweepDef]:
    """The second held-out set: :data:`HELDOUT2_SEED`, :data:`HELDOUT2_DRAW`,
    :data:`HELDOUT2_SWEEP_SEED`."""
    return later_heldout(size, "heldout2", HELDOUT2_SEED, HELDOUT2_DRAW, HELDOUT2_SWEEP_SEED)


def heldout3_sweeps(size: Size) -> list[SweepDef]:
    """The third held-out set: :data:`HELDOUT3_SEED`, :data:`HELDOUT3_DRAW`,
    :data:`HELDOUT3_SWEEP_SEED`."""
    return later_heldout(size, "heldout3", HELDOUT3_SEED, HELDOUT3_DRAW, HELDOUT3_SWEEP_SEED)


def variant_store(setting: str) -> str:
    """The sweep of the policy variants on ``setting``."""
    return f"{setting}-variants"


VARIANT_SWEEPS = tuple(variant_store(s) for s in VARIANT_SETTINGS)
NOISE_SWEEPS = tuple(noise_store(x) for x in NOISE_LEVELS if x != MAIN_NOISE)
SENSITIVITY_SWEEPS = (
    *NOISE_SWEEPS,
    "ltf-cure-sigma",
    "concave-cure-sigma",
    "imdb-sigma",
)
MAIN_SWEEPS = ("intro", "ltf", "concave", "concave-v2", "imdb")
SELECT_SWEEPS = (
    "select-imdb",
    "select-imdb29",
    "select-lcdb",
    "select-live",
    "select-imdb-arm",
    "select-lcdb-arm",
    "select-live-arm",
)
HELDOUT_SYNTHETIC = tuple(f"heldout-{key}{arm}" for key in HELDOUT_FAMILIES for arm in ("", "-arm"))


def later_stores(prefix: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(synthetic stores, every store) of the held-out set ``prefix`` (:func:`later_heldout`),
    in the order of the first set's."""
    synthetic = tuple(f"{prefix}-{key}{arm}" for key in HELDOUT_FAMILIES for arm in ("", "-arm"))
    real = (f"{prefix}-{key}{arm}" for arm in ("", "-arm") for key in ("imdb", "lcdb", "live"))
    return synthetic, (*synthetic, *real)


HELDOUT2_SYNTHETIC, HELDOUT2_SWEEPS = later_stores("heldout2")
"""The second held-out set's stores (:func:`heldout2_sweeps`): synthetic ones, all."""
HELDOUT3_SYNTHETIC, HELDOUT3_SWEEPS = later_stores("heldout3")
"""The third held-out set's stores (:func:`heldout3_sweeps`)."""
HELDOUT_SWEEPS = (
    *HELDOUT_SYNTHETIC,
    "select-imdb",
    "select-lcdb",
    "select-live",
    "select-imdb-arm",
    "select-lcdb-arm",
    "select-live-arm",
)
"""The held-out evaluation's stores: the synthetic ones and those it shares with model
selection (IMDB with the paper's 7 learners, lcdb-v1 test)."""
TARGETS: dict[str, tuple[str, ...]] = {
    "intro": ("intro",),
    "ltf": ("ltf",),
    "concave": ("concave", "concave-v2"),
    "imdb": ("imdb",),
    "sensitivity": ("ltf", "concave", "imdb", *SENSITIVITY_SWEEPS),
    "robustness": (*MAIN_SWEEPS, *VARIANT_SWEEPS, *NOISE_SWEEPS),
    "theory": (),
    "modelselection": SELECT_SWEEPS,
    "heldout": HELDOUT_SWEEPS,
    "heldout2": HELDOUT2_SWEEPS,
    "heldout3": HELDOUT3_SWEEPS,
    "peers": (),
    "deadlines": (),
    "all": (
        *MAIN_SWEEPS,
        *SENSITIVITY_SWEEPS,
        *VARIANT_SWEEPS,
        *SELECT_SWEEPS,
        *HELDOUT_SYNTHETIC,
        *HELDOUT2_SWEEPS,
        *HELDOUT3_SWEEPS,
    ),
}
"""The sweeps each ``reproduce`` target runs (``sensitivity`` and ``robustness`` need the main
sweeps they are compared with; ``theory`` runs no sweep, only the exact checks; ``peers`` only
Optuna's pruners against the library; ``deadlines`` only the budgets in time, kept out of
``all`` for its time)."""
THEORY_TARGETS = ("intro", "theory", "all")
"""Targets that also run the theory checks (the dominance search, Section 3.1's price)."""
PEER_TARGETS = ("modelselection", "peers", "all")
"""Targets that also run Optuna's pruners against the library
(:mod:`~risingbandits.reproduce.peers`)."""
DEADLINE_TARGETS = ("deadlines",)
"""Targets that run the budgets in time (:mod:`~risingbandits.reproduce.deadlines`)."""


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
