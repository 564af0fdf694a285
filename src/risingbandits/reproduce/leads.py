"""Who leads a comparison and by how much, with the rules the model-selection recommendation and
the held-out verdicts are decided by (pure functions of store results, never tuned to agree).

A lead is the policy with the lowest mean of a metric at one budget, its runner-up, and the
paired 95% interval of ``runner-up - leader`` over the units (instance, seed): every policy
meets the same rewards on a unit (common random numbers), so the per-unit difference removes
what the unit itself contributes. The lead is *significant* when that interval lies above 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from risingbandits.analysis.stats import MeanCI
from risingbandits.reproduce.data import Results
from risingbandits.reproduce.settings import HELDOUT_NAME, HELDOUT_POLICY

METRIC_NAMES = {"final_gap": "final-model gap", "regret": "regret"}


@dataclass(frozen=True)
class Lead:
    """The lowest mean of ``metric`` at ``horizon`` among some policies, and the runner-up."""

    metric: str
    horizon: int
    best: str
    runner_up: str
    best_ci: MeanCI
    runner_ci: MeanCI
    margin: MeanCI
    """Paired ``runner-up - best`` per unit (> 0: the best is lower)."""

    @property
    def significant(self) -> bool:
        return self.margin.low > 0


def compare(r: Results, horizon: int, metric: str, best: str, runner: str) -> Lead:
    """``best`` against ``runner`` by ``metric`` at ``horizon``."""
    return Lead(
        metric,
        horizon,
        best,
        runner,
        r.ci(best, horizon, metric),
        r.ci(runner, horizon, metric),
        r.gap(best, runner, horizon, metric),
    )


def lead(r: Results, horizon: int, metric: str, among: Sequence[str] | None = None) -> Lead:
    """The lead by ``metric`` at ``horizon`` among ``among`` (default: every policy)."""
    labels = [p for p in r.order(horizon, metric) if among is None or p in among]
    return compare(r, horizon, metric, labels[0], labels[1])


# -- model selection: which policy for which budget ----------------------------------------------


@dataclass(frozen=True)
class BudgetRange:
    """Consecutive budgets of one setting where the same policy has the lowest final gap."""

    setting: str
    leads: tuple[Lead, ...]
    """The final-gap leads, one per budget of the range."""
    regret: tuple[Lead, ...]
    """The regret leads at the same budgets."""

    @property
    def policy(self) -> str:
        return self.leads[0].best

    @property
    def budgets(self) -> tuple[int, ...]:
        return tuple(x.horizon for x in self.leads)

    @property
    def significant(self) -> int:
        """At how many of its budgets the lead is significant."""
        return sum(x.significant for x in self.leads)


def budget_ranges(setting: str, r: Results) -> list[BudgetRange]:
    """Budgets of ``r`` grouped into ranges by the policy with the lowest mean final gap."""
    ranges: list[BudgetRange] = []
    for h in r.horizons:
        gap, regret = lead(r, h, "final_gap"), lead(r, h, "regret")
        if ranges and ranges[-1].policy == gap.best:
            last = ranges.pop()
            ranges.append(BudgetRange(setting, (*last.leads, gap), (*last.regret, regret)))
        else:
            ranges.append(BudgetRange(setting, (gap,), (regret,)))
    return ranges


def overall_choice(leads: Mapping[str, Lead]) -> tuple[str, int]:
    """Across settings at one budget (``{setting: final-gap lead}``): the policy that leads in
    the most settings and in how many (ties: the first setting's order decides)."""
    counts: dict[str, int] = {}
    for x in leads.values():
        counts[x.best] = counts.get(x.best, 0) + 1
    best = max(counts, key=lambda p: counts[p])  # first maximum in setting order
    return best, counts[best]


# -- the held-out evaluation of the default policy ---------------------------------------------


@dataclass(frozen=True)
class HeldoutCell:
    """The policy judged (the default, :data:`~risingbandits.reproduce.settings.HELDOUT_POLICY`,
    unless another is put in its place) against every other policy in one (setting, budget)
    cell."""

    setting: str
    horizon: int
    synthetic: bool
    """A synthetic family's cell, where criterion (b), the regret, is judged."""
    own_regret: MeanCI
    own_gap: MeanCI
    regret_rival: Lead
    """The lead of the best other policy by regret, with the policy judged as the runner-up: its
    margin is ``judged - other`` (< 0: the policy judged is lower)."""
    gap_rival: Lead
    """The same by the final-model gap."""
    gap_lower: tuple[str, ...]
    """Every other policy whose final-model gap is significantly lower than the judged one's
    (the paired 95% interval of ``judged - other`` above 0), not only the best by its mean."""

    @property
    def gap_no_worse(self) -> bool:
        """(a) The judged policy's final-model gap is the lowest, or no other policy's is
        significantly lower: each paired 95% interval of ``judged - other`` reaches 0."""
        return not self.gap_lower

    @property
    def lowest_regret(self) -> bool | None:
        """(b) No other policy's mean regret is below the judged one's (synthetic cells; None
        elsewhere). A tie counts: where HACE-UCB is ACE-UCB (T / K >= 128) or Successive Halving
        (every round run, no hand-over), it makes their very choices."""
        if not self.synthetic:
            return None
        return self.own_regret.mean <= self.regret_rival.best_ci.mean


def rival(r: Results, horizon: int, metric: str, judged: str = HELDOUT_POLICY) -> Lead:
    """The best policy other than ``judged`` by ``metric``, with ``judged`` as runner-up."""
    others = [p for p in r.order(horizon, metric) if p != judged]
    return compare(r, horizon, metric, others[0], judged)


def heldout_cells(
    setting: str,
    r: Results,
    horizons: Sequence[int],
    synthetic: bool,
    judged: str = HELDOUT_POLICY,
) -> list[HeldoutCell]:
    """One cell per budget of ``horizons``, judging ``judged`` (by default the default)."""
    return [
        HeldoutCell(
            setting,
            h,
            synthetic,
            r.ci(judged, h, "regret"),
            r.ci(judged, h, "final_gap"),
            rival(r, h, "regret", judged),
            rival(r, h, "final_gap", judged),
            significantly_lower(r, h, "final_gap", judged),
        )
        for h in horizons
    ]


def significantly_lower(r: Results, horizon: int, metric: str, judged: str) -> tuple[str, ...]:
    """The policies whose ``metric`` is significantly below ``judged``'s at ``horizon`` (paired
    95% interval of ``judged - other`` above 0), in order of their means."""
    others = [p for p in r.order(horizon, metric) if p != judged]
    return tuple(p for p in others if r.gap(p, judged, horizon, metric).low > 0)


def criteria_counts(cells: Sequence[HeldoutCell]) -> tuple[int, int]:
    """In how many of ``cells`` (a) holds, and (b) (of the synthetic ones)."""
    a = sum(c.gap_no_worse for c in cells)
    return a, sum(bool(c.lowest_regret) for c in cells)


def yes_no(flag: bool | None) -> str:
    return "-" if flag is None else "yes" if flag else "no"


Verdict = Callable[[HeldoutCell], bool | None]
CRITERIA: tuple[tuple[str, str, Verdict], ...] = (
    (
        "a",
        f"{HELDOUT_NAME}'s final-model gap is the lowest, or no other policy's is significantly "
        f"lower: the paired 95% interval of ({HELDOUT_NAME} - other) reaches 0 or below for every "
        "other policy",
        lambda c: c.gap_no_worse,
    ),
    (
        "b",
        f"on the synthetic families, {HELDOUT_NAME} has the lowest mean policy regret of all "
        "policies (no other policy's is lower)",
        lambda c: c.lowest_regret,
    ),
)
"""The issue's two criteria, each checked cell by cell."""
