"""The model selector's checkpoint format and files.

A checkpoint is one JSON object, tagged ``"format": FORMAT``. Version 4 (this one) holds the
candidates (all names, the active ones, forced pulls still to start), what the budget counts
(``cost``) and the budget, the costs of a budget in cost (each candidate's summed cost, the
cost of cancelled steps, under ``"seconds"`` how long each step in flight has run:
:class:`~risingbandits.modelselect.costs.PullCosts`), the pulls in flight, the history of
scores with their metrics, the trace if one is kept, and the policy's online run (parameters,
run state at its capacity, generator; :meth:`~risingbandits.policies.base.Policy.state_dict`).
Version 3 is version 4 with a budget of steps (read as ``cost="pulls"``, no costs); any other
version is refused with one line (version 2 held the run state for the whole budget, K x T;
version 1 had no pulls in flight, history or candidate changes).

Every field is checked before anything is built from it, one ``ValueError`` line naming the
field (the selector's own fields by :func:`check_selector_fields`, the candidates, history and
trace by their ``restore``, the policy's run by :func:`~risingbandits.policies.machinery.checkpoint.
check_checkpoint`). Files are written to a uniquely named part file beside the target and
renamed into place, so a crash never leaves half a checkpoint and concurrent saves do not
collide (the last rename wins).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from operator import methodcaller
from pathlib import Path
from typing import Any

from risingbandits.modelselect.costs import COST_MODES
from risingbandits.outputs import atomic_write
from risingbandits.policies.machinery.capacity import MAX_HORIZON
from risingbandits.policies.machinery.checkpoint import integer, number, refuse, shown

FORMAT = "risingbandits.modelselect/4"
STEPS_ONLY = "risingbandits.modelselect/3"
"""The previous version: this one without a budget in cost (read as ``cost="pulls"``)."""
_FAMILY = "risingbandits.modelselect/"
FIELDS = (
    "candidates",
    "cost",
    "budget",
    "costs",
    "score_range",
    "noise_proxy",
    "seed",
    "max_pending",
    "in_flight",
    "history",
    "trace",
    "policy",
)


def check_format(data: Any) -> Mapping[str, Any]:
    """``data`` if it is a checkpoint of this version, or of version 3 as one of this version
    with a budget of steps (one clear ValueError otherwise)."""
    found = data.get("format") if isinstance(data, Mapping) else None
    if not isinstance(found, str) or not found.startswith(_FAMILY):
        raise ValueError(f"not a model-selection checkpoint: its format is not {FORMAT!r}")
    if found == STEPS_ONLY:
        return {**data, "format": FORMAT, "cost": "pulls", "costs": None}
    if found != FORMAT:
        raise ValueError(
            f"checkpoint format {found[:60]!r} is not supported: this version of risingbandits "
            f"reads {FORMAT!r} and {STEPS_ONLY!r} only"
        )
    return data


def check_selector_fields(data: Mapping[str, Any]) -> None:
    """The selector's own settings: every field present, ``cost`` one of
    :data:`~risingbandits.modelselect.costs.COST_MODES`, the budget an integer in 1..2**53 (a
    budget of steps) or a finite number > 0 (in cost), the seed an integer >= 0,
    ``max_pending`` null or an integer >= 1, ``noise_proxy`` a finite number >= 0,
    ``score_range`` null or a list of two numbers, the policy's configuration a mapping
    (``{"policy": name, "params": {...}}``)."""
    missing = [k for k in FIELDS if k not in data]
    if missing:
        raise ValueError(f"checkpoint has no {', '.join(missing)}: it is incomplete")
    budget, seed, pending = data["budget"], data["seed"], data["max_pending"]
    cost = data["cost"]
    if not isinstance(cost, str) or cost not in COST_MODES:
        raise refuse("cost", cost, f"use one of {', '.join(COST_MODES)}")
    if cost == "pulls" and (not integer(budget) or not 1 <= budget <= MAX_HORIZON):
        raise refuse("budget", budget, f"use an integer in 1..{MAX_HORIZON}")
    if cost != "pulls" and (not number(budget) or budget <= 0):
        raise refuse("budget", budget, "use a finite number > 0 (a budget in cost)")
    if not integer(seed) or seed < 0:
        raise refuse("seed", seed, "use an integer >= 0")
    if pending is not None and (not integer(pending) or pending < 1):
        raise refuse("max_pending", pending, "use null or an integer >= 1")
    proxy = data["noise_proxy"]
    if not number(proxy) or proxy < 0:
        raise refuse("noise_proxy", proxy, "use a finite number >= 0")
    given = data["score_range"]
    if given is not None and (not isinstance(given, list) or not all(map(number, given))):
        raise refuse("score_range", given, "use null or [low, high], two finite numbers")
    policy = data["policy"]
    config = policy.get("policy") if isinstance(policy, Mapping) else None
    params = config.get("params", {}) if isinstance(config, Mapping) else None
    if (
        not isinstance(config, Mapping)
        or not isinstance(config.get("policy"), str)
        or not isinstance(params, Mapping)
        or not all(isinstance(k, str) for k in params)
    ):
        raise refuse("policy.policy", config, 'use {"policy": name, "params": {...}}')


def checkpoint_path(path: Any) -> Path:
    """``path`` (a str or os.PathLike) as a Path."""
    if not isinstance(path, str | os.PathLike):
        raise ValueError(f"path={shown(path)} is not allowed: use a file path (str or Path)")
    return Path(path)


def write_checkpoint(path: str | Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as JSON to ``path``, atomically (:func:`~risingbandits.outputs.atomic_write`:
    a temporary file of its own, a random name created exclusively, flushed to disk, so after a
    power cut the checkpoint is the old one or the new one, never empty; renamed into place). A
    path that is a folder, or in a folder that is missing or not writable, is one ValueError
    line."""
    target = checkpoint_path(path)
    if target.is_dir():
        raise ValueError(f"checkpoint {str(target)!r} cannot be written: it is a folder")
    text = json.dumps(data).encode()
    try:
        atomic_write(target, methodcaller("write", text))
    except (FileNotFoundError, NotADirectoryError, PermissionError) as exc:
        raise ValueError(
            f"checkpoint {str(target)!r} cannot be written ({exc.strerror}): give a file in an "
            "existing, writable folder"
        ) from None


def read_checkpoint(path: str | Path) -> Mapping[str, Any]:
    """The checkpoint in ``path``, format checked."""
    source = checkpoint_path(path)
    try:
        data = json.loads(source.read_text())
    except (OSError, ValueError) as exc:  # ValueError: bad UTF-8 or JSON, a 4300-digit integer
        raise ValueError(f"checkpoint {str(source)!r} cannot be read: {exc}") from None
    except RecursionError:
        raise ValueError(
            f"checkpoint {str(source)!r} cannot be read: it is nested too deeply for a checkpoint"
        ) from None
    try:
        return check_format(data)
    except ValueError as exc:  # the file named, as for the other refusals above
        reason = str(exc).removeprefix("checkpoint ")
        raise ValueError(f"checkpoint {str(source)!r}: {reason}") from None
