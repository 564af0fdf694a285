"""The candidates of a model selector: names the user sees, and the policy's arms behind them.

A candidate keeps its index (its position in :attr:`Candidates.names`) for the whole run: a new
candidate gets the next index, a retired one keeps its own, and nothing is renumbered for the
user. The policy only knows the *active* candidates, as arms 0..K-1 in the order of their
indices (``slots``); retiring a candidate removes its arm, adding one appends an arm
(:mod:`~risingbandits.policies.machinery.transplant`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from risingbandits.policies.machinery.checkpoint import integer, refuse, shown

NEW_CANDIDATE_PULLS = 2
"""Forced first pulls of a candidate added during a run. Two scores are the fewest from which a
rising-bandit index can take a slope (CURE-UCB's start gives every arm two pulls, Alg. 1 line 2;
TI-UCB's fit needs two); without them an index policy past its own start phase would rank the
new arm by its bonus alone, or (CURE-UCB's mu(0) = 0 convention) never pull it. Policies whose
statistics need more pulls get them from their own rules (R-ed-UCB's +inf while its window is
empty, R-ed-AE's round robin over the least-pulled arm)."""


def increasing_indices(value: Any, n_candidates: int) -> bool:
    """Whether ``value`` (from a checkpoint) is a non-empty list of candidate indices in
    increasing order (the active candidates, in the policy's arm order)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(integer(i) and 0 <= i < n_candidates for i in value)
        and all(a < b for a, b in itertools.pairwise(value))
    )


def candidate_count(candidates: Any) -> int:
    """The number of candidates ``candidates`` gives (:func:`candidate_names`), without building
    their names (a count is checked against the budget first)."""
    if integer(candidates):
        if candidates < 2:
            raise ValueError(f"candidates={candidates!r} is not allowed: use an integer >= 2")
        return int(candidates)
    if isinstance(candidates, str) or not isinstance(candidates, Sequence):
        raise ValueError(
            f"candidates={shown(candidates)} is not allowed: use a count >= 2 or a list of names"
        )
    return len(candidates)


def candidate_names(candidates: int | Sequence[str]) -> list[str]:
    """``K`` (named candidate0..candidateK-1) or K >= 2 different names (non-blank strings)."""
    count = candidate_count(candidates)
    if not isinstance(candidates, Sequence):  # a count
        return [f"candidate{i}" for i in range(count)]
    names = list(candidates)
    if count < 2 or not all(map(is_name, names)) or len(set(names)) != count:
        raise ValueError(
            f"candidates={shown(names)} is not allowed: use two or more different names "
            "(non-blank strings)"
        )
    return names


def is_name(value: Any) -> bool:
    """A candidate's name: a string that is not blank."""
    return isinstance(value, str) and bool(value.strip())


class Candidates:
    """All candidates (``names``), the active ones as the policy's arms (``slots[arm]`` is a
    candidate index, ``slot_of[index]`` its arm or -1 once retired), and the forced first pulls
    still to start for candidates added during the run (``forced``)."""

    __slots__ = ("forced", "names", "slot_of", "slots")

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.slots = list(range(len(self.names)))
        self.slot_of = list(range(len(self.names)))
        self.forced: dict[int, int] = {}

    def index(self, key: Any) -> int:
        """The index of candidate ``key`` (its index or its name)."""
        if isinstance(key, str):
            try:
                return self.names.index(key)
            except ValueError:
                raise ValueError(
                    f"candidate {key!r} is not allowed: use one of {self.names}"
                ) from None
        if isinstance(key, bool) or not isinstance(key, int | np.integer):
            raise ValueError(
                f"arm={key!r} is not allowed: use a candidate's index (as select() returns) or name"
            )
        if not 0 <= key < len(self.names):
            raise ValueError(f"arm={key!r} is not allowed: use 0..{len(self.names) - 1} or a name")
        return int(key)

    def active_index(self, key: Any) -> int:
        """:meth:`index`, refused for a retired candidate."""
        index = self.index(key)
        if self.slot_of[index] < 0:
            raise ValueError(f"candidate {self.names[index]!r} is retired")
        return index

    def add(self, name: Any) -> list[int]:
        """Append candidate ``name``; returns the plan of arms (``keep``) for the policy."""
        if not is_name(name) or name in self.names:
            raise ValueError(
                f"name={name!r} is not allowed: use a new, non-blank name (taken: {self.names})"
            )
        keep = [*range(len(self.slots)), -1]
        self.names.append(name)
        self.slot_of.append(len(self.slots))
        self.slots.append(len(self.names) - 1)
        self.forced[len(self.names) - 1] = NEW_CANDIDATE_PULLS
        return keep

    def retire(self, index: int) -> list[int]:
        """Remove candidate ``index``'s arm; returns the plan of arms (``keep``)."""
        if len(self.slots) <= 2:
            raise ValueError(
                f"retire({self.names[index]!r}) is not allowed: two candidates must stay active"
            )
        gone = self.slot_of[index]
        keep = [s for s in range(len(self.slots)) if s != gone]
        self.slots = [self.slots[s] for s in keep]
        self.slot_of = [-1] * len(self.names)
        for arm, candidate in enumerate(self.slots):
            self.slot_of[candidate] = arm
        self.forced.pop(index, None)
        return keep

    def allowed(self, available: Any) -> list[bool]:
        """``available`` (None, a boolean mask over all candidates, or names/indices) as a mask
        over all candidates, restricted to the active ones; refused if it leaves none."""
        active = [s >= 0 for s in self.slot_of]
        if available is None:
            return active
        mask = self._mask(available)
        for i, wanted in enumerate(mask):
            if wanted and not active[i]:
                raise ValueError(
                    f"available: candidate {self.names[i]!r} is not allowed: it is retired"
                )
        if not any(mask):
            raise ValueError(f"available={available!r} is not allowed: it names no candidate")
        return mask

    def _mask(self, available: Any) -> list[bool]:
        values = list(available) if isinstance(available, Iterable) else None
        if values is None or isinstance(available, str):
            raise ValueError(
                f"available={available!r} is not allowed: use a mask over the "
                f"{len(self.names)} candidates or a list of names or indices"
            )
        if values and all(isinstance(v, bool | np.bool_) for v in values):
            if len(values) != len(self.names):
                raise ValueError(
                    f"available has {len(values)} entries: a mask needs one per candidate "
                    f"({len(self.names)})"
                )
            return [bool(v) for v in values]
        mask = [False] * len(self.names)
        for key in values:
            mask[self.index(key)] = True
        return mask

    def state(self) -> dict[str, Any]:
        """JSON-able: names, active candidates in arm order, forced pulls still to start."""
        return {
            "names": list(self.names),
            "active": list(self.slots),
            "forced": [[i, n] for i, n in self.forced.items()],
        }

    @classmethod
    def restore(cls, data: Any) -> Candidates:
        """Inverse of :meth:`state`, checked (a checkpoint's ``candidates``): two or more
        different names, two or more active candidates in increasing order, forced pulls
        ``[index, n]`` of active candidates with n in 1..:data:`NEW_CANDIDATE_PULLS`."""
        if not isinstance(data, Mapping) or not {"names", "active", "forced"} <= set(data):
            raise refuse("candidates", data, "use {names, active, forced}")
        names, active, forced = data["names"], data["active"], data["forced"]
        if (
            not isinstance(names, list)
            or len(names) < 2
            or not all(map(is_name, names))
            or len(set(names)) != len(names)
        ):
            raise refuse(
                "candidates.names", names, "use a list of two or more different non-blank names"
            )
        out = cls(names)
        last = len(names) - 1
        if not increasing_indices(active, len(names)) or len(active) < 2:
            raise refuse(
                "candidates.active",
                active,
                f"use two or more different candidate indices in 0..{last}, in increasing order",
            )
        out.slots = [int(i) for i in active]
        out.slot_of = [-1] * len(out.names)
        for arm, candidate in enumerate(out.slots):
            out.slot_of[candidate] = arm
        out.forced = out._restore_forced(forced)
        return out

    def _restore_forced(self, data: Any) -> dict[int, int]:
        """A checkpoint's forced pulls: ``[index, n]`` pairs, an active candidate once each."""
        if not isinstance(data, list):
            raise refuse("candidates.forced", data, "use a list of [index, pulls] pairs")
        forced: dict[int, int] = {}
        for pair in data:
            if (
                not isinstance(pair, list)
                or len(pair) != 2
                or not integer(pair[0])
                or not 0 <= pair[0] < len(self.names)
                or self.slot_of[pair[0]] < 0
                or pair[0] in forced
                or not integer(pair[1])
                or not 1 <= pair[1] <= NEW_CANDIDATE_PULLS
            ):
                raise refuse(
                    "candidates.forced",
                    pair,
                    f"use [index, pulls]: an active candidate (once) and 1..{NEW_CANDIDATE_PULLS}",
                )
            forced[int(pair[0])] = int(pair[1])
        return forced

    def check_forced(self, started: Sequence[int]) -> None:
        """A checkpoint's forced pulls against the pulls each candidate has reported or in
        flight (``started``): a new candidate is pulled only by its forced first pulls while it
        has any left, so n left allow at most NEW_CANDIDATE_PULLS - n started."""
        for index, left in self.forced.items():
            if started[index] > NEW_CANDIDATE_PULLS - left:
                raise refuse(
                    "candidates.forced",
                    [index, left],
                    f"candidate {index} has {started[index]} pulls reported or in flight, so at "
                    f"most {max(0, NEW_CANDIDATE_PULLS - started[index])} of its "
                    f"{NEW_CANDIDATE_PULLS} forced first pulls can be left",
                )
