"""Online model selection: spend a training budget on the candidate that will be best at the end.

:class:`ModelSelector` wraps any registered policy's online object (one implementation per
algorithm: the same compiled kernel as the simulator). Each round, :meth:`ModelSelector.select`
names the candidate to train next, the caller trains it one step (an epoch, a mini-batch) and
reports its new validation score with :meth:`ModelSelector.update`. A candidate is an arm of a
rested rising bandit: its score tends to grow with the number of steps it was trained (CURE-UCB,
Song et al. 2026, Sec. 1 and the IMDB experiment).

Scores must lie in [0, 1] (accuracies) unless a ``score_range`` is given, in which case they are
rescaled linearly from that range to [0, 1]; anything outside is refused. For ``sigma="auto"``
the policy's noise proxy is ``noise_proxy``, by default 0.5: a score in [0, 1] is 1/2-sub-Gaussian
(Hoeffding's lemma), the proxy of a Bernoulli accuracy, so 0.5 is valid whatever the score's
distribution; pass a smaller value when scores are known to be less noisy.

The whole state (policy run state, generator state, scores) is saved to JSON with :meth:`save`
and restored with :meth:`ModelSelector.load`: a resumed job continues with exactly the selections
an uninterrupted one would have made.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from risingbandits.policies.base import Policy
from risingbandits.policies.registry import make_policy, policy_from_dict

FORMAT = "risingbandits.modelselect/1"
DEFAULT_NOISE_PROXY = 0.5


def _names(candidates: int | Sequence[str]) -> tuple[str, ...]:
    if isinstance(candidates, int | np.integer) and not isinstance(candidates, bool):
        if candidates < 2:
            raise ValueError(f"candidates={candidates!r} is not allowed: use an integer >= 2")
        return tuple(f"candidate{i}" for i in range(int(candidates)))
    if isinstance(candidates, str) or not isinstance(candidates, Sequence):
        raise ValueError(
            f"candidates={candidates!r} is not allowed: use a count >= 2 or a list of names"
        )
    names = tuple(str(c) for c in candidates)
    if len(names) < 2 or len(set(names)) != len(names):
        raise ValueError(
            f"candidates={list(names)!r} is not allowed: use two or more different names"
        )
    return names


def _score_range(value: Sequence[float] | None) -> tuple[float, float] | None:
    if value is None:
        return None
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"score_range={value!r} is not allowed: use (low, high)") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(
            f"score_range={value!r} is not allowed: use two finite numbers with low < high"
        )
    return low, high


class ModelSelector:
    """Choose which of K candidate models to train next, within a budget of T training steps.

    ``policy`` is a registry name (with optional ``preset`` and ``params``) or a configured
    :class:`~risingbandits.policies.base.Policy` (copied). ``seed`` fixes the policy's own
    randomness (tie-breaks, samples).
    """

    def __init__(
        self,
        candidates: int | Sequence[str],
        budget: int,
        policy: str | Policy = "cure-ucb",
        *,
        preset: str | None = None,
        params: Mapping[str, Any] | None = None,
        score_range: Sequence[float] | None = None,
        noise_proxy: float = DEFAULT_NOISE_PROXY,
        seed: int = 0,
    ) -> None:
        self._names = _names(candidates)
        k = len(self._names)
        if isinstance(budget, bool) or not isinstance(budget, int | np.integer) or budget < k:
            raise ValueError(
                f"budget={budget!r} is not allowed: use an integer >= the number of "
                f"candidates ({k}), so that each is trained at least once"
            )
        if isinstance(policy, Policy):
            if preset is not None or params:
                raise ValueError("give preset/params with a policy name, not with a Policy")
            self._policy = policy_from_dict(policy.to_dict())
        else:
            self._policy = make_policy(policy, preset=preset, **dict(params or {}))
        if not (isinstance(noise_proxy, int | float) and 0.0 <= noise_proxy < math.inf):
            raise ValueError(
                f"noise_proxy={noise_proxy!r} is not allowed: use a finite number >= 0"
            )
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"seed={seed!r} is not allowed: use a non-negative integer")
        self._budget = int(budget)
        self._range = _score_range(score_range)
        self._noise_proxy = float(noise_proxy)
        self._seed = int(seed)
        self._last = np.full(k, np.nan)
        self._policy.reset(k, self._budget, seed=self._seed, noise_proxy=self._noise_proxy)

    # -- the loop ----------------------------------------------------------------------------

    def select(self) -> int:
        """Index of the candidate to train next (the same until :meth:`update` is called)."""
        if self.done:
            raise RuntimeError(f"the budget of {self._budget} training steps is used up")
        return self._policy.select()

    def update(self, arm: int, score: float) -> None:
        """Record the validation score of candidate ``arm`` after the step just trained."""
        if isinstance(arm, bool) or not isinstance(arm, int | np.integer):
            raise ValueError(f"arm={arm!r} is not allowed: use the index returned by select()")
        if isinstance(score, bool) or not isinstance(score, int | float | np.integer | np.floating):
            raise ValueError(f"score={score!r} is not allowed: use a number")
        value = float(score)
        low, high = self._range or (0.0, 1.0)
        if not (low <= value <= high):
            hint = "" if self._range else "; give score_range=(low, high) to rescale"
            raise ValueError(
                f"score={score!r} is not allowed: use a number in [{low:g}, {high:g}]{hint}"
            )
        self._policy.update(int(arm), (value - low) / (high - low))
        self._last[int(arm)] = value

    # -- what it knows -----------------------------------------------------------------------

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    @property
    def budget(self) -> int:
        return self._budget

    @property
    def policy(self) -> dict[str, Any]:
        """The policy's name and parameters."""
        return self._policy.to_dict()

    @property
    def t(self) -> int:
        """Training steps recorded so far."""
        return self._policy.t

    @property
    def remaining(self) -> int:
        return self._budget - self.t

    @property
    def done(self) -> bool:
        return self.t >= self._budget

    @property
    def pulls(self) -> np.ndarray:
        """Training steps given to each candidate."""
        return self._policy.pulls

    @property
    def last_scores(self) -> np.ndarray:
        """The last score reported for each candidate (NaN if never trained)."""
        return self._last.copy()

    # -- checkpoints -------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume, as JSON-able data."""
        return {
            "format": FORMAT,
            "candidates": list(self._names),
            "budget": self._budget,
            "score_range": list(self._range) if self._range else None,
            "noise_proxy": self._noise_proxy,
            "seed": self._seed,
            "last_scores": [None if math.isnan(x) else float(x) for x in self._last],
            "policy": self._policy.state_dict(),
        }

    @classmethod
    def from_state_dict(cls, data: Mapping[str, Any]) -> ModelSelector:
        """The selector saved by :meth:`state_dict`, ready to continue."""
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise ValueError(f"not a model-selection checkpoint: its format is not {FORMAT!r}")
        try:
            selector = cls(
                data["candidates"],
                int(data["budget"]),
                policy_from_dict(data["policy"]["policy"]),
                score_range=data["score_range"],
                noise_proxy=float(data["noise_proxy"]),
                seed=int(data["seed"]),
            )
            selector._policy.load_state_dict(data["policy"])
            selector._last[:] = [np.nan if x is None else x for x in data["last_scores"]]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"model-selection checkpoint is incomplete: {exc!r}") from None
        return selector

    def save(self, path: str | Path) -> None:
        """Write the checkpoint to ``path`` (JSON, written beside and renamed into place)."""
        target = Path(path)
        part = target.with_name(target.name + f".{os.getpid()}.part")
        part.write_text(json.dumps(self.state_dict()))
        os.replace(part, target)

    @classmethod
    def load(cls, path: str | Path) -> ModelSelector:
        """The selector saved in ``path`` by :meth:`save`."""
        source = Path(path)
        try:
            data = json.loads(source.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"checkpoint {str(source)!r} cannot be read: {exc}") from None
        return cls.from_state_dict(data)

    def __repr__(self) -> str:
        return (
            f"ModelSelector({len(self._names)} candidates, budget={self._budget}, "
            f"policy={self._policy.name!r}, t={self.t})"
        )
