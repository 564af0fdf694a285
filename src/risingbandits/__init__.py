"""risingbandits: rising (rested) multi-armed bandits with a known horizon.

CURE-UCB (Song et al., "Rising Multi-Armed Bandits with Known Horizons", ICML 2026), the
baselines it is compared with, the paper's instances, exact oracle and policy regret, and a
compiled simulator whose policies also run online, one ``select``/``update`` at a time.
"""

from risingbandits.instances import (
    Noise,
    RisingInstance,
    from_functions,
    from_means,
    intro,
    ltf,
)
from risingbandits.policies import POLICIES, Policy, make_policy
from risingbandits.regret import Oracle
from risingbandits.simulate import SimulationResult, simulate, simulate_horizons
from risingbandits.simulate_budget import BudgetResult, simulate_budget

__version__ = "0.1.0"

__all__ = [
    "POLICIES",
    "BudgetResult",
    "Noise",
    "Oracle",
    "Policy",
    "RisingInstance",
    "SimulationResult",
    "__version__",
    "from_functions",
    "from_means",
    "intro",
    "ltf",
    "make_policy",
    "simulate",
    "simulate_budget",
    "simulate_horizons",
]
