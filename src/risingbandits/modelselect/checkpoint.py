"""The model selector's checkpoint format and files.

A checkpoint is one JSON object, tagged ``"format": FORMAT``. Version 2 (this one) holds the
candidates (all names, the active ones, forced pulls still to start), the budget, the pulls in
flight, the history of scores with their metrics, the trace if one is kept, and the policy's
online run (parameters, run state, generator; :meth:`~risingbandits.policies.base.Policy.
state_dict`). A checkpoint of another version is refused with one line (version 1 had no pulls
in flight, history or candidate changes). Files are written beside the target and renamed into
place, so a crash never leaves half a checkpoint.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FORMAT = "risingbandits.modelselect/2"
_FAMILY = "risingbandits.modelselect/"


def check_format(data: Any) -> Mapping[str, Any]:
    """``data`` if it is a checkpoint of this version (one clear ValueError otherwise)."""
    found = data.get("format") if isinstance(data, Mapping) else None
    if not isinstance(found, str) or not found.startswith(_FAMILY):
        raise ValueError(f"not a model-selection checkpoint: its format is not {FORMAT!r}")
    if found != FORMAT:
        raise ValueError(
            f"checkpoint format {found!r} is not supported: this version of risingbandits "
            f"reads {FORMAT!r} only"
        )
    return data


def write_checkpoint(path: str | Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as JSON to ``path``, atomically (a part file renamed into place)."""
    target = Path(path)
    part = target.with_name(target.name + f".{os.getpid()}.part")
    try:
        part.write_text(json.dumps(data))
        os.replace(part, target)
    finally:
        part.unlink(missing_ok=True)


def read_checkpoint(path: str | Path) -> Mapping[str, Any]:
    """The checkpoint in ``path``, format checked."""
    source = Path(path)
    try:
        data = json.loads(source.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"checkpoint {str(source)!r} cannot be read: {exc}") from None
    return check_format(data)
