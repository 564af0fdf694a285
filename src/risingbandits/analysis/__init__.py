"""Statistics of results: confidence intervals (and, with the engine, ranks and win rates)."""

from risingbandits.analysis.stats import MeanCI, finite_or_none, mean_ci

__all__ = ["MeanCI", "finite_or_none", "mean_ci"]
