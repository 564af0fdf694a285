"""Reproduce the paper's experiments: every figure, the claims with verdicts, one report.

* :mod:`.settings`: the sweeps (engine specs) of each target, at full and quick size;
* :mod:`.run`: :func:`reproduce` runs them (resumable stores), the theory checks, the report;
* :mod:`.data`, :mod:`.claims`, :mod:`.figures`, :mod:`.report`: results, verdicts, figures,
  Markdown + self-contained HTML (:mod:`.document`);
* :mod:`.leads`: beyond the paper, the rules of the model-selection recommendation and of the
  held-out verdicts on the default policy (targets ``modelselection``, ``heldout``,
  ``heldout2`` and ``heldout3``).
"""

from risingbandits.reproduce.claims import CLAIMS, VERDICTS, ClaimResult
from risingbandits.reproduce.report import ReportError
from risingbandits.reproduce.run import ReproduceResult, SweepRun, reproduce
from risingbandits.reproduce.settings import FULL, QUICK, SIZES, TARGETS

__all__ = [
    "CLAIMS",
    "FULL",
    "QUICK",
    "SIZES",
    "TARGETS",
    "VERDICTS",
    "ClaimResult",
    "ReportError",
    "ReproduceResult",
    "SweepRun",
    "reproduce",
]
