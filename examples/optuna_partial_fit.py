"""Tune scikit-learn ``SGDClassifier`` models on digits with Optuna and a rising-bandit policy.

Six trials are sampled once from an Optuna search space (loss, alpha); the default policy
(``risingbandits.modelselect.DEFAULT_POLICY``) then decides, step by step, which trial trains its
next mini-batch. Every validation accuracy is reported to its trial (``trial.report``), so the
study's storage shows the learning curves; at the end the recommended trial is COMPLETE and the
others PRUNED. Inspect the run with
``optuna-dashboard sqlite:///digits.db`` when ``--storage sqlite:///digits.db`` is given.

    pip install 'risingbandits[optuna,examples]'
    python examples/optuna_partial_fit.py [--budget 300] [--storage sqlite:///digits.db] [--json]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import optuna
from digits_steps import Learner, digits

from risingbandits.integrations.optuna import OptunaSelection
from risingbandits.modelselect import DEFAULT_POLICY

SPACE = {
    "loss": optuna.distributions.CategoricalDistribution(["log_loss", "hinge", "modified_huber"]),
    "alpha": optuna.distributions.FloatDistribution(1e-5, 1e-1, log=True),
}


def tune(
    budget: int = 300,
    policy: str = DEFAULT_POLICY,
    seed: int = 0,
    storage: str | None = None,
    n_candidates: int = 6,
) -> dict[str, Any]:
    """Sample ``n_candidates`` trials, spend ``budget`` steps on them; returns the summary."""
    data = digits(seed)
    study = optuna.create_study(
        study_name=f"digits-{policy}-seed{seed}",
        storage=storage,
        direction="maximize",
        sampler=optuna.samplers.RandomSampler(seed=seed),
    )
    selection = OptunaSelection(
        study,
        search_space=SPACE,
        n_candidates=n_candidates,
        budget=budget,
        policy=policy,
        seed=seed,
    )
    learners = [Learner(p["loss"], p["alpha"], len(data.y_train), seed) for p in selection.params]
    best = selection.run(lambda i, trial: learners[i].step(data))
    return {**selection.summary(), "recommended_trial": best.number}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=300, help="training steps in total")
    parser.add_argument(
        "--policy",
        default=DEFAULT_POLICY,
        help=f"any risingbandits policy (default: {DEFAULT_POLICY})",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--storage", default=None, help="Optuna storage URL (default: memory)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    result = tune(args.budget, args.policy, args.seed, args.storage)
    if args.json:
        print(json.dumps(result))
        return
    for (name, pulls), params in zip(result["pulls"].items(), result["params"], strict=True):
        score = result["last_scores"][name]
        shown = "never trained" if score is None else f"accuracy {score:.3f}"
        print(
            f"{name}  {params['loss']:<15} alpha={params['alpha']:.1e}  {pulls:>4} steps  {shown}"
        )
    print(
        f"recommended: {result['recommended']} (trial {result['recommended_trial']}, accuracy "
        f"{result['recommended_score']:.3f}; best last accuracy {result['best_last_score']:.3f})"
    )


if __name__ == "__main__":
    main()
