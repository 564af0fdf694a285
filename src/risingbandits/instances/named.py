"""Instances reachable by name from the CLI (``--instance NAME``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from risingbandits.instances.base import RisingInstance
from risingbandits.instances.noise import Noise
from risingbandits.instances.synthetic import intro


@dataclass(frozen=True)
class NamedInstance:
    name: str
    summary: str
    build: Callable[[int, Noise], RisingInstance]


NAMED_INSTANCES: dict[str, NamedInstance] = {
    "intro": NamedInstance(
        "intro",
        "the paper's two-arm example: A = 0.4, B = min(1, n/20000); best arm changes at T = 16,000",
        lambda horizon, noise: intro(horizon, noise),
    ),
}


def named_instance(name: str, horizon: int, noise: Noise) -> RisingInstance:
    """Build the instance registered as ``name`` for horizons up to ``horizon``."""
    try:
        entry = NAMED_INSTANCES[name]
    except KeyError:
        raise ValueError(
            f"instance={name!r} is not allowed: use one of {', '.join(NAMED_INSTANCES)} "
            "(or --means FILE)"
        ) from None
    return entry.build(horizon, noise)
