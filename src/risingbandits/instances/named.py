"""Instances reachable by name from the CLI (``--instance NAME``).

A name is either a fixed instance (``intro``) or an instance of a versioned family:
``FAMILY`` (its instance 0 with generator seed 0) or ``FAMILY/SEED/INDEX`` (e.g.
``ltf-v1/0/7``, ``concave-v1/0/0``, ``imdb-v1``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from risingbandits.instances.base import RisingInstance
from risingbandits.instances.families import FAMILIES, family_instance, full_horizons
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


def instance_names() -> list[tuple[str, str]]:
    """(name, one-line summary) of every fixed instance and family."""
    fixed = [(e.name, e.summary) for e in NAMED_INSTANCES.values()]
    families = [(f"{f.id}[/SEED/INDEX]", f.summary) for f in FAMILIES.values()]
    return fixed + families


def named_instance(name: str, horizon: int, noise: Noise | None = None) -> RisingInstance:
    """Build the instance called ``name`` for horizons up to ``horizon``.

    ``noise=None`` keeps the instance's own noise model (Gaussian 0.1 for synthetic instances,
    Bernoulli for learning curves).
    """
    if name in NAMED_INSTANCES:
        return NAMED_INSTANCES[name].build(horizon, noise or Noise())
    fam, seed, index = family_address(name)
    return family_instance(fam, index, seed, horizon, noise)


def named_full_horizon(name: str) -> int | None:
    """The longest table the instance called ``name`` has (lcdb-v1 and live-v1 instances end
    where their curves end), or None when any horizon can be built."""
    if name in NAMED_INSTANCES:
        return None
    fam, seed, index = family_address(name)
    fulls = full_horizons(fam, index + 1, seed)
    return None if fulls is None else fulls[index]


def family_address(name: str) -> tuple[str, int, int]:
    """(family, generator seed, index) of ``FAMILY`` or ``FAMILY/SEED/INDEX``."""
    fam, _, rest = name.partition("/")
    if fam in FAMILIES:
        parts = rest.split("/") if rest else ["0", "0"]
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise ValueError(
                f"instance={name!r} is not allowed: use {fam} or {fam}/SEED/INDEX (integers)"
            )
        return fam, int(parts[0]), int(parts[1])
    allowed = ", ".join([*NAMED_INSTANCES, *FAMILIES])
    raise ValueError(
        f"instance={name!r} is not allowed: use one of {allowed} (or FAMILY/SEED/INDEX, "
        "or --means FILE)"
    )
