"""A rising instance: a table of means (arms x pulls) plus a noise model.

``means[i, n - 1]`` is the expected reward of the n-th pull of arm i (DECISIONS.md row 1: the
first pull of arm i has mean mu_i(1)). The table is the whole instance: the oracle and every
regret are computed from it exactly (see :mod:`risingbandits.regret`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from risingbandits.instances.noise import Noise

if TYPE_CHECKING:
    from risingbandits.regret import Oracle

_TOL = 1e-12


def _arm_label(arm: int, names: Sequence[str]) -> str:
    return f"arm {arm} ({names[arm]})" if names else f"arm {arm}"


def _check_rows_equal(means: Any, field: str) -> None:
    """A list of rows (one per arm) must give every arm the same number of pulls."""
    if isinstance(means, np.ndarray) or not isinstance(means, Sequence):
        return
    lengths = [len(row) if isinstance(row, Sequence | np.ndarray) else None for row in means]
    if None not in lengths and len(set(lengths)) > 1:
        first = lengths[0]
        arm = next(i for i, n in enumerate(lengths) if n != first)
        raise ValueError(
            f"{field} is ragged: arm 0 has {first} pulls and arm {arm} has {lengths[arm]}: give "
            "every arm the same number of pulls"
        )


def arm_name_tuple(names: Any) -> tuple[str, ...]:
    """``names`` as a tuple of distinct strings; a str (it would split into letters) and a
    repeated name are refused in one line."""
    if isinstance(names, str | bytes):
        raise ValueError(f"arm_names={names!r} is not allowed: use a list of names, one per arm")
    out = tuple(str(n) for n in names)
    if len(set(out)) < len(out):
        repeated = next(n for i, n in enumerate(out) if n in out[:i])
        raise ValueError(f"arm_names has {repeated!r} twice: give each arm a name of its own")
    return out


def _refuse_non_numbers(raw: np.ndarray, field: str, allowed: str) -> None:
    """Refuse a table of strings or of booleans (NumPy would read ``"0.1"`` and ``True`` as
    numbers)."""
    if raw.dtype.kind in "SUb":
        kind = "boolean" if raw.dtype.kind == "b" else "text"
        raise ValueError(f"{field} has {kind} values (dtype {raw.dtype}): use {allowed}")


def validate_means(
    means: Any, names: Sequence[str] = (), require_rising: bool = True, field: str = "means"
) -> np.ndarray:
    """Check a mean table and return it as a read-only float64 array.

    Raises ``ValueError`` naming ``field``, the arm and the pull (1-based) of the first bad
    value; a ragged list of rows and complex values are refused as such.
    """
    _check_rows_equal(means, field)
    try:
        raw = np.asarray(means)
        table = None if np.iscomplexobj(raw) else np.array(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{field} must be a numeric 2-D array (arms x pulls)") from None
    if table is None:
        raise ValueError(
            f"{field} has complex values (dtype {raw.dtype}): use real numbers in [0, 1]"
        )
    _refuse_non_numbers(raw, field, "numbers in [0, 1]")
    if table.ndim != 2:
        raise ValueError(f"{field} must be a 2-D array (arms x pulls); got shape {table.shape}")
    n_arms, n_pulls = table.shape
    if n_arms < 2:
        raise ValueError(f"{field} has {n_arms} arm(s): a bandit needs K >= 2 arms")
    if n_pulls < 1:
        raise ValueError(f"{field} has 0 pulls per arm: the horizon T must be >= 1")
    if names and len(names) != n_arms:
        raise ValueError(f"names has {len(names)} entries for {n_arms} arms")
    bad = ~np.isfinite(table)
    if bad.any():
        arm, pull = np.argwhere(bad)[0]
        raise ValueError(
            f"{field}[{_arm_label(arm, names)}, pull {pull + 1}] = {table[arm, pull]} is not finite"
        )
    outside = (table < 0.0) | (table > 1.0)
    if outside.any():
        arm, pull = np.argwhere(outside)[0]
        raise ValueError(
            f"{field}[{_arm_label(arm, names)}, pull {pull + 1}] = {table[arm, pull]:g} "
            "is outside the allowed range [0, 1]"
        )
    if require_rising and n_pulls > 1:
        drops = np.diff(table, axis=1) < -_TOL
        if drops.any():
            arm, pull = np.argwhere(drops)[0]
            raise ValueError(
                f"{field}[{_arm_label(arm, names)}] decreases at pull {pull + 2}: "
                f"{table[arm, pull + 1]:g} after {table[arm, pull]:g} (a rising instance must be "
                "non-decreasing; for curves that dip use --allow-decreasing, allow_decreasing = "
                "true in a sweep spec, or require_rising=False)"
            )
    table.setflags(write=False)
    return table


_EMPTY_TABLE = np.zeros((0, 0))
_EMPTY_TABLE.setflags(write=False)


def refuse_first(
    table: np.ndarray, bad: np.ndarray, field: str, allowed: str, names: Sequence[str] = ()
) -> None:
    """One line naming the arm and pull (1-based) of the first ``bad`` value of a table, its
    value and what is ``allowed``; nothing when no value is bad."""
    if bad.any():
        arm, pull = np.argwhere(bad)[0]
        raise ValueError(
            f"{field}[{_arm_label(arm, names)}, pull {pull + 1}] = {table[arm, pull]} is not "
            f"allowed: use {allowed}"
        )


def _validate_std(std: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only float64 table of standard deviations of ``shape``, finite and >= 0."""
    try:
        raw = np.asarray(std)
        table = np.array(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("noise_std must be a numeric 2-D array (arms x pulls)") from None
    _refuse_non_numbers(raw, "noise_std", "numbers >= 0")
    if table.shape != shape:
        raise ValueError(f"noise_std has shape {table.shape}: use the shape of means, {shape}")
    refuse_first(table, ~np.isfinite(table) | (table < 0.0), "noise_std", "a finite number >= 0")
    table.setflags(write=False)
    return table


def validate_costs(costs: Any, shape: tuple[int, int], names: Sequence[str] = ()) -> np.ndarray:
    """A read-only K x T float64 table of positive finite costs (the cost of each arm's n-th
    pull); one cost per arm (a length-K vector) is repeated along the pulls. One line naming the
    arm and pull of the first bad value otherwise."""
    try:
        raw = np.asarray(costs)
        table = None if np.iscomplexobj(raw) else np.array(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("costs must be numbers: one per arm, or a table arms x pulls") from None
    _refuse_non_numbers(raw, "costs", "numbers > 0")
    if table is None:
        raise ValueError("costs are complex numbers: use real numbers > 0")
    if table.ndim not in (1, 2):
        raise ValueError(
            f"costs has shape {np.shape(costs)}: use one cost per arm ({shape[0]},) or the "
            f"shape of means, {shape}"
        )
    if table.ndim == 1:
        if table.shape[0] != shape[0]:
            raise ValueError(f"costs has {table.shape[0]} entries for {shape[0]} arms")
        table = np.repeat(table[:, None], shape[1], axis=1)
    if table.shape != shape:
        raise ValueError(
            f"costs has shape {table.shape}: use one cost per arm ({shape[0]},) or the shape of "
            f"means, {shape}"
        )
    refuse_first(table, ~np.isfinite(table) | (table <= 0.0), "costs", "a finite number > 0", names)
    with np.errstate(over="ignore"):
        total = np.cumsum(table, axis=1)
    refuse_first(table, ~np.isfinite(total), "costs", "costs whose sum per arm is finite", names)
    table.setflags(write=False)
    return table


@dataclass(frozen=True)
class ArmConcavity:
    """Concavity of one arm: how often its increments grow (Assumption 3.1 is violated)."""

    arm: int
    name: str
    concave: bool
    violations: int
    max_violation: float
    decreases: int


@dataclass(frozen=True)
class ConcavityReport:
    """Per-arm concavity check. Information, not a rule: real learning curves are not concave."""

    arms: tuple[ArmConcavity, ...]

    @property
    def all_concave(self) -> bool:
        return all(a.concave for a in self.arms)

    def summary(self) -> str:
        lines = []
        for a in self.arms:
            verdict = "concave" if a.concave else "not concave"
            lines.append(
                f"arm {a.arm} ({a.name}): {verdict}; {a.violations} growing increments "
                f"(max {a.max_violation:.3g}), {a.decreases} decreases"
            )
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class RisingInstance:
    """K arms, a mean table ``means[i, n - 1]`` for n = 1..T_max, and a noise model.

    ``noise_std`` (optional, same shape as ``means``) is a standard deviation per pull, e.g. the
    spread of a learning curve across data splits; the noise model ``curve-std`` draws Gaussian
    rewards with it, and any other noise model ignores it.

    ``test_means`` (optional, same shape, values in [0, 1]) is what each model scores on data
    the policy never sees (a test split) after each pull: when given, the final-model gap is
    judged on it (:meth:`risingbandits.regret.Oracle.final_gap`), while rewards and regret
    follow ``means`` (the validation scores the policy observes).

    ``costs`` (optional, same shape, or one per arm; positive) is what each pull costs (seconds of
    training, a cloud bill): the budget in cost of :func:`risingbandits.simulate_budget` spends
    it. Without it every pull costs 1 (:attr:`pull_costs`).
    """

    means: np.ndarray
    noise: Noise = field(default_factory=Noise)
    name: str = "custom"
    arm_names: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    require_rising: bool = True
    noise_std: np.ndarray | None = None
    test_means: np.ndarray | None = None
    costs: np.ndarray | None = None

    def __post_init__(self) -> None:
        names = arm_name_tuple(self.arm_names)
        table = validate_means(self.means, names, self.require_rising)
        object.__setattr__(self, "means", table)
        if not names:
            names = tuple(f"arm{i}" for i in range(table.shape[0]))
        object.__setattr__(self, "arm_names", names)
        if not isinstance(self.noise, Noise):
            raise ValueError(f"noise={self.noise!r} is not allowed: use a risingbandits Noise")
        if self.noise_std is not None:
            object.__setattr__(self, "noise_std", _validate_std(self.noise_std, table.shape))
        if self.test_means is not None:
            test = validate_means(self.test_means, names, False, "test_means")
            if test.shape != table.shape:
                raise ValueError(
                    f"test_means has shape {test.shape}: use the shape of means, {table.shape}"
                )
            object.__setattr__(self, "test_means", test)
        if self.costs is not None:
            object.__setattr__(self, "costs", validate_costs(self.costs, table.shape, names))
        if self.noise.kind == "curve-std" and self.noise_std is None:
            raise ValueError(
                f"noise=curve-std is not allowed for instance {self.name!r}: it has no table of "
                "standard deviations per pull (noise_std); use gaussian[:SIGMA], bernoulli or none"
            )

    @property
    def n_arms(self) -> int:
        return int(self.means.shape[0])

    @property
    def max_horizon(self) -> int:
        """Largest horizon this table supports (pulls per arm in the table)."""
        return int(self.means.shape[1])

    @cached_property
    def pull_costs(self) -> np.ndarray:
        """The cost of each arm's n-th pull (``costs``, or 1 for every pull; read-only)."""
        if self.costs is not None:
            return self.costs
        ones = np.ones(self.means.shape)
        ones.setflags(write=False)
        return ones

    @property
    def noise_proxy(self) -> float:
        """Sub-Gaussian proxy of the rewards (``sigma="auto"``): the noise model's, or the
        largest standard deviation of the table for ``curve-std``."""
        if self.noise.kind == "curve-std":
            assert self.noise_std is not None
            return float(self.noise_std.max())
        return self.noise.proxy

    @property
    def noise_table(self) -> np.ndarray:
        """The table the compiled reward draw reads: ``noise_std``, or an empty 2-D array."""
        if self.noise.kind == "curve-std" and self.noise_std is not None:
            return self.noise_std
        return _EMPTY_TABLE

    def reward(self, key: np.uint64, arm: int, pull: int) -> float:
        """The counter-based reward of the ``pull``-th pull (1-based) of ``arm`` in the run with
        reward key ``key`` (:func:`risingbandits.seeding.reward_key`): exactly what the compiled
        simulator draws, for driving an online policy by hand."""
        from risingbandits.rewards import draw_reward

        return float(
            draw_reward(
                self.means, self.noise.code, self.noise.sigma, self.noise_table, key, arm, pull
            )
        )

    @cached_property
    def oracle(self) -> Oracle:
        """Best fixed arm and V*(T) for every T at once."""
        from risingbandits.regret import Oracle

        return Oracle(self.means, self.test_means)

    def with_noise(self, noise: Noise) -> RisingInstance:
        """The same means with another noise model."""
        return replace(self, noise=noise)

    def concavity_report(self) -> ConcavityReport:
        """Which arms have non-increasing increments (paper Assumption 3.1)."""
        inc = np.diff(self.means, axis=1)
        growth = np.diff(inc, axis=1)
        rows = []
        for i in range(self.n_arms):
            g = growth[i]
            viol = g > _TOL
            rows.append(
                ArmConcavity(
                    arm=i,
                    name=self.arm_names[i],
                    concave=not bool(viol.any()),
                    violations=int(viol.sum()),
                    max_violation=float(g.max(initial=0.0)),
                    decreases=int((inc[i] < -_TOL).sum()),
                )
            )
        return ConcavityReport(tuple(rows))

    def describe(self) -> dict[str, Any]:
        """JSON-friendly description (no mean table)."""
        return {
            "name": self.name,
            "n_arms": self.n_arms,
            "max_horizon": self.max_horizon,
            "noise": str(self.noise),
            "arm_names": list(self.arm_names),
            **dict(self.meta),
        }
