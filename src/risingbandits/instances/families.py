"""Versioned instance families: random generators and real learning curves (Gymnasium-style ids).

An instance of a family is named ``"<family>/<generator seed>/<index>"`` and is a pure function of
that name (and the family's parameters): instance j is the same whatever ``count`` is asked for,
in any process, on any day. A change to a generator gets a new version (``ltf-v2``), never an
edit of ``ltf-v1``, so published numbers stay reproducible.

The random families (ltf-v1, concave-v1, concave-v2) take a parameter ``costs``: ``unit``
(default: no costs, every pull costs 1, the instances of before) or ``spread`` (each arm one
cost per pull, drawn log-uniformly over :data:`SPREAD_COSTS` = [0.1, 10], geometric mean 1, by
the instance's own generator after its means, which stay those of ``unit``). The real test beds
carry their measured costs (lcdb-v1, live-v1); imdb-v1 has none recorded.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from risingbandits.instances.base import RisingInstance
from risingbandits.instances.files import read_npz
from risingbandits.instances.lcdb import build_lcdb_v1, lcdb_v1_members
from risingbandits.instances.live import build_live_v1, live_v1_members
from risingbandits.instances.memory import check_table_size
from risingbandits.instances.noise import Noise
from risingbandits.instances.synthetic import ltf_means
from risingbandits.policies.machinery.checkpoint import number, shown
from risingbandits.user_cache import check_fixed_file, notice_once

PAPER_HORIZON = 50_000
IMDB_ARMS = ("lr_0.003", "ogd_0.1", "nn_1", "nn_2", "nn_2-2", "nn_2-2-2", "nn_1-1-2")
IMDB_ALL_ARMS = (
    *(f"adagrad_{a}" for a in ("0.001", "0.003", "0.05", "0.25", "0.5", "1")),
    *(f"lr_{a}" for a in ("0.001", "0.003", "0.1", "0.25", "0.5", "1")),
    *(f"nn_{a}" for a in ("1-1", "1-1-1", "1-1-2", "1-2", "1", "2-2", "2-2-2", "2", "3", "4", "5")),
    *(f"ogd_{a}" for a in ("0.0001", "0.003", "0.1", "0.25", "0.5", "1")),
)
"""Every curve of ``curves.npz`` (29 learners, in the file's order): ``params = {arms = ...}``."""


COST_OPTIONS = ("unit", "spread")
SPREAD_COSTS = (0.1, 10.0)
"""Range of the per-arm costs of ``costs = "spread"``: a hundredfold, as between a linear model
and a wide network, around 1 (the median arm costs 1 per pull, as every arm does with unit)."""


def _cost_option(name: str, params: Mapping[str, Any]) -> str:
    """The family's ``costs`` parameter (one ValueError line naming it otherwise)."""
    option = params.get("costs", "unit")
    if option not in COST_OPTIONS:
        raise ValueError(
            f"costs={option!r} is not allowed for {name}: use unit (every pull costs 1) or "
            f"spread (one cost per arm, log-uniform over {list(SPREAD_COSTS)})"
        )
    return str(option)


def _drawn_costs(rng: np.random.Generator, option: str, n_arms: int) -> dict[str, Any]:
    """The instance's ``costs`` for ``option``, drawn after its means (none for ``unit``)."""
    if option == "unit":
        return {}
    low, high = np.log(SPREAD_COSTS)
    return {"costs": np.exp(rng.uniform(low, high, n_arms))}


CONCAVE_SCALES = (25_000, 10_000_000)
"""The ``scale`` of concave-v1 and concave-v2 (their normalisation pull count): from 25,000 every
drawn shape can be solved for its fraction at 10,000 pulls (a rat arm's fraction reaches down to
0.591 only from a scale of 24,674), and concave-v2 sums a scale-long array per draw."""


def check_param(name: str, key: str, value: Any) -> None:
    """Refuse a value of family ``name``'s parameter ``key`` that its generator cannot use (one
    ValueError line naming the value and what is allowed); lcdb-v1 and live-v1 check ``split``
    when they list their members, imdb-v1 the names in ``arms`` when it reads its curves."""
    if key == "t_sat_scale" and not (number(value) and value >= 1):
        raise ValueError(
            f"t_sat_scale={shown(value)} is not allowed for {name}: use a finite number of pulls "
            ">= 1 (the saturation times are drawn from [0.05, 1] x t_sat_scale)"
        )
    low, high = CONCAVE_SCALES
    if key == "scale" and not (number(value) and low <= value <= high):
        raise ValueError(
            f"scale={shown(value)} is not allowed for {name}: use a number of pulls from "
            f"{low:,} to {high:,}"
        )
    if key == "costs":
        _cost_option(name, {key: value})
    if key == "arms" and not (
        isinstance(value, list | tuple) and value and all(isinstance(a, str) for a in value)
    ):
        raise ValueError(
            f"arms={shown(value)} is not allowed for {name}: use a non-empty list of learner "
            f"names of curves.npz (e.g. {list(IMDB_ARMS[:2])})"
        )
    if key == "curves_dir" and not (isinstance(value, str | os.PathLike) and str(value)):
        raise ValueError(
            f"curves_dir={shown(value)} is not allowed for {name}: use the path of a folder "
            "holding curves.npz"
        )


def _family_rng(family: str, seed: int, index: int) -> np.random.Generator:
    tag = int.from_bytes(family.encode(), "little") % (2**63)
    return np.random.default_rng(np.random.SeedSequence([tag, seed, index]))


def _ltf_v1(rng: np.random.Generator, horizon: int, params: Mapping[str, Any]) -> tuple:
    """Appendix A.1: K ~ U{2..5}; b ~ U[0.1, 1.0]; t_sat ~ U[0.05 x 50,000, 50,000]; a = b/t_sat.

    The saturation times are drawn on the paper's scale (``t_sat_scale`` = 50,000, any finite
    number of pulls >= 1) whatever table length ``horizon`` is asked for.
    """
    scale = float(params.get("t_sat_scale", PAPER_HORIZON))
    k = int(rng.integers(2, 6))
    b = rng.uniform(0.1, 1.0, k)
    t_sat = rng.uniform(0.05 * scale, scale, k)
    meta = {"b": b.tolist(), "t_sat": t_sat.tolist()}
    return ltf_means(b, t_sat, horizon), (), meta


# -- concave-v1 ---------------------------------------------------------------------------------

CONCAVE_REACH_T = 10_000  # every arm reaches >= 75% of its final value by this pull count
CONCAVE_REACH_FRACTION = 0.75


def _g(shape: str, n: np.ndarray, k: float, scale: float) -> np.ndarray:
    """Normalised saturating growth of App. A.2: g(0) = 0, g(scale) = 1, concave."""
    if shape == "rat":
        return (n / (n + k)) / (scale / (scale + k))
    if shape == "exp":
        return -np.expm1(-k * n) / -np.expm1(-k * scale)
    return np.arctan(k * n) / np.arctan(k * scale)


def _shape_for(shape: str, fraction: float, scale: float) -> float:
    """The k with g(CONCAVE_REACH_T; k) = fraction (g is monotone in k; solved in log k)."""
    from scipy.optimize import brentq

    at = np.array([float(CONCAVE_REACH_T)])

    def gap(log_k: float) -> float:
        k = float(np.exp(log_k))
        value = float(_g(shape, at, k, scale)[0])
        return value - fraction if shape != "rat" else fraction - value

    return float(np.exp(brentq(gap, -30.0, 10.0, xtol=1e-12)))


def _concave_arm(
    rng: np.random.Generator, s: float, L: float, fraction: float, n: np.ndarray, scale: float
) -> tuple[np.ndarray, dict[str, Any]]:
    shape = str(rng.choice(["rat", "exp", "atan"]))
    k = _shape_for(shape, fraction, scale)
    mu = s + (L - s) * _g(shape, n, k, scale)
    return mu, {"s": s, "L": L, "g": shape, "k": k, "fraction_at_10k": fraction}


def _min_fraction(s: float, L: float) -> float:
    """Smallest g(10,000) with mu(10,000) >= 75% of mu(T): (0.75 L - s) / (L - s), >= 0.21."""
    return max(0.21, (CONCAVE_REACH_FRACTION * L - s) / (L - s))


def _concave_v1(rng: np.random.Generator, horizon: int, params: Mapping[str, Any]) -> tuple:
    """Appendix A.2 with every open choice written down.

    K ~ U{2..5} arms, in a random order (roles in ``meta["roles"]``):
    * early peaker: s ~ U[0.54, 0.56] (mu(0) ~ 0.55), L ~ U[0.57, 0.59] (mu(T) ~ 0.58), fast:
      g(10,000) ~ U[0.90, 0.99];
    * late bloomer: s ~ U[0.08, 0.12] (mu(0) ~ 0.1), L ~ U[0.94, 0.96] (mu(T) ~ 0.95), as late
      as the 75% rule allows: g(10,000) ~ U[f_min, f_min + 0.05];
    * K - 2 other arms: s ~ U[0.05, 0.35], L ~ U[0.90, 0.99], g(10,000) ~ U[f_min, 0.99];
    where mu(n) = s + (L - s) g(n), g one of g_rat, g_exp, g_atan (uniformly), normalised at
    T = 50,000 (``scale``), its shape k solved so that g(10,000) is the drawn fraction, and
    f_min makes mu(10,000) >= 75% of mu(50,000) (the paper's "75% by t = 10,000", read as
    applying to every arm). The paper calls the late bloomer "the optimal arm"; nothing here
    forces it to be (another arm may have a higher L): the report counts how often it is, and
    ``concave-v2`` forces it.
    """
    return _concave(rng, horizon, params, bloomer_best=False)


def _concave_v2(rng: np.random.Generator, horizon: int, params: Mapping[str, Any]) -> tuple:
    """concave-v1 with the other arms redrawn until the late bloomer is the best fixed arm at
    T = 50,000 (``scale``), as the paper's "the optimal arm" says.

    The rule, exactly: K, the early peaker and the late bloomer are drawn as in concave-v1 (the
    same draws in the same order, from the concave-v2 stream of the instance); then each of the
    K - 2 other arms is drawn as in concave-v1 and, while its value V(T) = sum_{n <= T} mu(n)
    at T = ``scale`` is >= the late bloomer's, drawn again with the stream's next numbers
    (each arm on its own: the other arms are independent, so this is the concave-v1 draw
    conditioned on the late bloomer being best); finally the random order. The early peaker
    needs no redraw: its V(50,000) <= 0.59 x 50,000 = 29,500, and the late bloomer's is at
    least 39,757 (s = 0.08, L = 0.94, the latest g). The late bloomer is therefore the best
    fixed arm at T = ``scale`` in every instance, whatever table length is asked for.
    """
    return _concave(rng, horizon, params, bloomer_best=True)


CONCAVE_MAX_DRAWS = 10_000
"""concave-v2 gives up (an error, never a silent instance) after this many draws of one arm."""


def _arm_value(meta: Mapping[str, Any], scale: float) -> float:
    """V(scale) = sum_{n <= scale} mu(n) of a concave arm described by its meta."""
    full = np.arange(1, int(scale) + 1, dtype=np.float64)
    g = _g(meta["g"], full, meta["k"], scale)
    return float(np.sum(meta["s"] + (meta["L"] - meta["s"]) * g))


def _other_arm(
    rng: np.random.Generator, n: np.ndarray, scale: float
) -> tuple[np.ndarray, dict[str, Any]]:
    s, L = rng.uniform(0.05, 0.35), rng.uniform(0.90, 0.99)
    frac = rng.uniform(_min_fraction(s, L), 0.99)
    return _concave_arm(rng, s, L, frac, n, scale)


def _concave(
    rng: np.random.Generator, horizon: int, params: Mapping[str, Any], bloomer_best: bool
) -> tuple:
    scale = float(params.get("scale", PAPER_HORIZON))
    k = int(rng.integers(2, 6))
    check_table_size(k, horizon)
    n = np.arange(1, horizon + 1, dtype=np.float64)
    arms: list[tuple[str, np.ndarray, dict[str, Any]]] = []
    s, L = rng.uniform(0.54, 0.56), rng.uniform(0.57, 0.59)
    arms.append(("early peaker", *_concave_arm(rng, s, L, rng.uniform(0.90, 0.99), n, scale)))
    s, L = rng.uniform(0.08, 0.12), rng.uniform(0.94, 0.96)
    low = _min_fraction(s, L)
    arms.append(("late bloomer", *_concave_arm(rng, s, L, rng.uniform(low, low + 0.05), n, scale)))
    bloomer = _arm_value(arms[1][2], scale) if bloomer_best else np.inf
    for _ in range(k - 2):
        for _draw in range(CONCAVE_MAX_DRAWS):
            mu, meta = _other_arm(rng, n, scale)
            if not bloomer_best or _arm_value(meta, scale) < bloomer:
                break
        else:
            raise RuntimeError(
                f"concave-v2: no other arm below the late bloomer in {CONCAVE_MAX_DRAWS} draws"
            )
        arms.append(("other", mu, meta))
    order = rng.permutation(k)
    table = np.vstack([arms[j][1] for j in order])
    roles = [arms[j][0] for j in order]
    names = tuple(
        role if role != "other" else f"other {j - 1}" for role, j in zip(roles, order, strict=True)
    )
    return table, names, {"roles": roles, "arms": [arms[j][2] for j in order]}


def default_curves_dir() -> Path:
    """``$RISINGBANDITS_IMDB_CURVES``, else the shared data folder beside the project.

    "Beside the project" is ``../shared/data/imdb-learning-curves`` seen from the source tree
    (editable installs) or from the working directory (a regular install run from the project).
    Such a folder is found, not named by the user, and may lie in a place others can write
    (``/tmp/shared`` for a run from ``/tmp/x``): it is used, by its real path, only if its
    ``curves.npz`` passes :func:`~risingbandits.user_cache.check_fixed_file`. One that fails is
    skipped with a one-line notice, or named in the ValueError if no other folder has curves.
    """
    env = os.environ.get("RISINGBANDITS_IMDB_CURVES")
    if env:
        return Path(env)
    relative = Path("shared") / "data" / "imdb-learning-curves"
    candidates = [Path(__file__).resolve().parents[4] / relative, Path.cwd().parent / relative]
    refused: list[str] = []
    for candidate in candidates:
        if not (candidate / "curves.npz").is_file():
            continue
        real = candidate.resolve()
        try:
            check_fixed_file(real / "curves.npz")
        except OSError as exc:
            refused.append(
                f"IMDB learning curves in {candidate} not used: {exc} (give --curves DIR or set "
                "RISINGBANDITS_IMDB_CURVES)"
            )
            continue
        for why in refused:
            notice_once("imdb-curves", why)
        return real
    if refused:
        raise ValueError(refused[0])
    return candidates[0]


def use_curves_dir(folder: str | Path) -> Path:
    """Make ``folder`` the default IMDB curves folder of this process and of the processes it
    starts (``$RISINGBANDITS_IMDB_CURVES``), so sweep specs stay free of local paths."""
    path = Path(folder).expanduser().resolve()
    if not (path / "curves.npz").is_file():
        raise ValueError(f"--curves={str(folder)!r} is not allowed: {path} holds no curves.npz")
    try:
        read_npz(path / "curves.npz", "curves")
    except ValueError as exc:
        raise ValueError(f"--curves={str(folder)!r} is not allowed: {exc}") from None
    os.environ["RISINGBANDITS_IMDB_CURVES"] = str(path)
    return path


def read_curves(curves_dir: str | Path | None = None, arms: tuple[str, ...] = IMDB_ARMS) -> tuple:
    """The learning curves of ``arms`` from ``curves.npz`` in ``curves_dir``: (table, names)."""
    folder = Path(curves_dir) if curves_dir else default_curves_dir()
    path = folder / "curves.npz"
    if not path.is_file():
        raise ValueError(
            f"IMDB learning curves not found: {path} does not exist (give --curves DIR or set "
            "RISINGBANDITS_IMDB_CURVES)"
        )
    data = read_npz(path, "curves", keys=arms)  # 7 of the 29 curves: 4x faster than all
    missing = [a for a in arms if a not in data]
    if missing:
        available = list(read_npz(path, "curves"))
        raise ValueError(f"curves {path}: arm(s) {missing} not found; available: {available}")
    return np.vstack([data[a] for a in arms]), tuple(arms)


def _imdb_v1(rng: np.random.Generator, horizon: int, params: Mapping[str, Any]) -> tuple:
    """The 7 learning curves of Metelli et al.'s IMDB experiment (DECISIONS.md row 15)."""
    arms = tuple(params.get("arms", IMDB_ARMS))
    table, names = read_curves(params.get("curves_dir"), arms)
    if horizon > table.shape[1]:
        raise ValueError(
            f"horizon={horizon} is not allowed: the curves have {table.shape[1]} pulls"
        )
    return table[:, :horizon], names, {"arms": list(names)}


@dataclass(frozen=True)
class Family:
    """A versioned generator of instances."""

    id: str
    summary: str
    build: Callable[[np.random.Generator, int, Mapping[str, Any]], tuple]
    noise: Noise
    rising: bool = True
    random: bool = True
    params: tuple[str, ...] = ()
    """Names of the generator's parameters; any other name is refused."""
    members: Callable[[int, Mapping[str, Any]], Sequence[Mapping[str, Any]]] | None = None
    """A finite family (lcdb-v1): for a generator seed and parameters, its instances, each as
    the extra parameters ``build`` receives (instance ``index`` is entry ``index``; an entry's
    ``full_horizon`` is the longest table it allows; its ``index``, if any, its place in the
    whole family, which names it). None: unbounded (random) or one instance.
    A builder may return a fourth item: a mapping of the instance's other tables, by their
    :class:`RisingInstance` field names (``noise_std``, ``test_means``, ``costs``). A family
    with the parameter ``costs`` gets its costs drawn here (:data:`COST_OPTIONS`)."""


FAMILIES: dict[str, Family] = {
    "ltf-v1": Family(
        "ltf-v1",
        "Linear-Then-Flat (paper App. A.1): K ~ U{2..5}, b ~ U[0.1, 1], t_sat ~ U[2.5k, 50k]",
        _ltf_v1,
        Noise("gaussian", 0.1),
        params=("t_sat_scale", "costs"),
    ),
    "concave-v1": Family(
        "concave-v1",
        "Concave (paper App. A.2): early peaker, late bloomer, saturating rat/exp/atan arms",
        _concave_v1,
        Noise("gaussian", 0.1),
        params=("scale", "costs"),
    ),
    "concave-v2": Family(
        "concave-v2",
        "Concave, late bloomer optimal: concave-v1 with the other arms redrawn until the late "
        "bloomer is the best fixed arm at T = 50,000",
        _concave_v2,
        Noise("gaussian", 0.1),
        params=("scale", "costs"),
    ),
    "imdb-v1": Family(
        "imdb-v1",
        "IMDB online model selection: 7 real learning curves, Bernoulli rewards (not monotone)",
        _imdb_v1,
        Noise("bernoulli"),
        rising=False,
        random=False,
        params=("arms", "curves_dir"),
    ),
    "lcdb-v1": Family(
        "lcdb-v1",
        "LCDB learning curves (validation accuracy): 5 learners per OpenML data set reaching "
        "2,048 samples, one sample per pull, noise = spread across splits; split = all|dev|test",
        build_lcdb_v1,
        Noise("curve-std"),
        rising=False,
        random=False,
        params=("split",),
        members=lcdb_v1_members,
    ),
    "live-v1": Family(
        "live-v1",
        "Live training curves (scikit-learn partial_fit, `risingbandits data live`): 8 of 16 "
        "learners per data set and seed, one mini-batch per pull, validation accuracy as "
        "recorded, gap on test accuracy; split = all|dev|test",
        build_live_v1,
        Noise("none"),
        rising=False,
        random=False,
        params=("split",),
        members=live_v1_members,
    ),
}


def family(name: str) -> Family:
    """The family registered as ``name`` (one clear ValueError otherwise)."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise ValueError(
            f"family={name!r} is not allowed: use one of {', '.join(FAMILIES)}"
        ) from None


def family_instance(
    name: str,
    index: int,
    seed: int = 0,
    horizon: int = PAPER_HORIZON,
    noise: Noise | None = None,
    **params: Any,
) -> RisingInstance:
    """Instance ``index`` of family ``name`` with generator seed ``seed`` (table length T)."""
    fam = family(name)
    if horizon < 1:
        raise ValueError(f"horizon={horizon} is not allowed: use an integer >= 1")
    if index < 0 or seed < 0:
        raise ValueError(f"index={index}, seed={seed} are not allowed: use integers >= 0")
    for key, value in params.items():
        if key not in fam.params:
            allowed = ", ".join(fam.params) or "none"
            raise ValueError(f"{name}: unknown parameter {key!r}: allowed are {allowed}")
        check_param(name, key, value)
    if fam.members is not None:
        members = fam.members(seed, params)
        if index >= len(members):
            raise ValueError(
                f"index={index} is not allowed for {name}{_where(params)}: it has "
                f"{len(members)} instances, use 0..{len(members) - 1}"
            )
        params = {**params, **members[index]}
    option = _cost_option(name, params) if "costs" in fam.params else "unit"
    rng = _family_rng(name, seed, index)
    table, names, meta, *tables = fam.build(rng, int(horizon), params)
    extra = {**(tables[0] if tables else {}), **_drawn_costs(rng, option, len(table))}
    place = int(params.get("index", index))
    return RisingInstance(
        table,
        noise or fam.noise,
        name=instance_id(name, seed, place),
        arm_names=names,
        meta={"family": name, "seed": seed, **meta, "index": place},
        require_rising=fam.rising,
        **extra,
    )


def instance_id(name: str, seed: int, index: int) -> str:
    """The name of instance ``index`` (its place in the whole family) of a family."""
    return f"{name}/{seed}/{index}"


def instance_ids(name: str, count: int, seed: int = 0, **params: Any) -> list[str]:
    """Names of the first ``count`` instances a family lists for ``params`` (a finite family's
    split lists members by their place in the whole family)."""
    members = family(name).members
    if members is None:
        return [instance_id(name, seed, j) for j in range(count)]
    listed = members(seed, params)[:count]
    return [instance_id(name, seed, int(m.get("index", j))) for j, m in enumerate(listed)]


def _where(params: Mapping[str, Any]) -> str:
    return f" ({', '.join(f'{k}={v}' for k, v in sorted(params.items()))})" if params else ""


def family_size(name: str, seed: int = 0, **params: Any) -> int | None:
    """How many instances the family has (None: unbounded, a random family)."""
    fam = family(name)
    if fam.members is not None:
        return len(fam.members(seed, params))
    return None if fam.random else 1


def full_horizons(name: str, count: int, seed: int = 0, **params: Any) -> list[int] | None:
    """The full horizon (longest table) of each of the first ``count`` instances, or None for
    a family whose instances have none (a random family: any horizon)."""
    members = family(name).members
    if members is None:
        return None
    listed = members(seed, params)[:count]
    if any(m.get("full_horizon") is None for m in listed):
        return None
    return [int(m["full_horizon"]) for m in listed]


def check_request(name: str, count: int, seed: int, horizon: int, **params: Any) -> None:
    """Refuse ``count`` instances beyond the family's size, and a ``horizon`` longer than the
    full horizon of one of them (one line naming the value and what is allowed)."""
    size = family_size(name, seed, **params)
    if count < 1 or (size is not None and count > size):
        if size is None:
            allowed = "use a count >= 1"
        elif size == 1:
            allowed = f"family {name}{_where(params)} has 1 instance, use count = 1"
        else:
            allowed = (
                f"family {name}{_where(params)} has {size} instances, use a count from 1 to {size}"
            )
        raise ValueError(f"count={count} is not allowed: {allowed}")
    fulls = full_horizons(name, count, seed, **params)
    limit = min(fulls, default=None) if fulls is not None else None
    if limit is not None and horizon > limit:
        raise ValueError(
            f"horizon={horizon} is not allowed for the first {count} instances of "
            f"{name}{_where(params)}: the shortest full horizon among them is {limit} pulls"
        )


def generate(
    name: str,
    count: int,
    seed: int = 0,
    horizon: int = PAPER_HORIZON,
    noise: Noise | None = None,
    **params: Any,
) -> list[RisingInstance]:
    """Instances 0..count-1 of a family (at most the family's size: :func:`family_size`)."""
    check_request(name, count, seed, horizon, **params)
    return [family_instance(name, j, seed, horizon, noise, **params) for j in range(count)]
