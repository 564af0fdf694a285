"""Tune scikit-learn models that learn by ``partial_fit`` with a rising-bandit model selector.

Six candidate models share a budget of training steps on the digits data set bundled with
scikit-learn. Each step trains one candidate on its next mini-batch of 32 samples and reports
its validation accuracy; the default policy of ``risingbandits.modelselect.ModelSelector``
(``DEFAULT_POLICY``, noise level estimated from the scores) decides which candidate gets the
next step, aiming at the one that will be best when the budget runs out. Halfway, the selector
is saved to a JSON checkpoint and restored, as a long tuning job would be. With ``--workers N``
the steps run on N threads at once, each on a candidate that is not already training
(``select(available=...)``); the order in which they finish, hence the run, then depends on
timing.

    pip install 'risingbandits[examples]'
    python examples/tune_sklearn_partial_fit.py [--budget 600] [--policy NAME] [--seed 0]
        [--param sigma=auto] [--workers 4] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin, clone
from sklearn.datasets import load_digits
from sklearn.linear_model import Perceptron, SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

from risingbandits.modelselect import DEFAULT_POLICY, ModelSelector
from risingbandits.policies import parse_params

BATCH = 32
CANDIDATES: dict[str, ClassifierMixin] = {
    "sgd-log alpha=1e-4": SGDClassifier(loss="log_loss", alpha=1e-4, random_state=0),
    "sgd-hinge alpha=1e-2": SGDClassifier(loss="hinge", alpha=1e-2, random_state=0),
    "perceptron": Perceptron(random_state=0),
    "sgd-huber alpha=1e-3": SGDClassifier(loss="modified_huber", alpha=1e-3, random_state=0),
    "mlp (16,) lr=1e-3": MLPClassifier((16,), learning_rate_init=1e-3, random_state=0),
    "mlp (64, 32) lr=1e-2": MLPClassifier((64, 32), learning_rate_init=1e-2, random_state=0),
}


class Candidate:
    """One model and its own stream of mini-batches over the training set."""

    def __init__(self, model: ClassifierMixin, data: tuple[np.ndarray, ...], seed: int) -> None:
        self.model = clone(model)
        self.x_train, self.y_train, self.x_val, self.y_val, self.classes = data
        self.rng = np.random.default_rng(seed)
        self.order = self.rng.permutation(len(self.y_train))
        self.position = 0

    def train_step(self) -> float:
        """Train on the next mini-batch; returns the new validation accuracy."""
        if self.position + BATCH > self.order.size:
            self.order, self.position = self.rng.permutation(self.order.size), 0
        rows = self.order[self.position : self.position + BATCH]
        self.position += BATCH
        self.model.partial_fit(self.x_train[rows], self.y_train[rows], classes=self.classes)
        return float(self.model.score(self.x_val, self.y_val))


def tune(
    budget: int = 600,
    policy: str = DEFAULT_POLICY,
    seed: int = 0,
    params: dict[str, Any] | None = None,
    workers: int = 1,
) -> dict[str, Any]:
    """Spend ``budget`` training steps under ``policy``; returns the selector's summary."""
    digits = load_digits()
    x_train, x_val, y_train, y_val = train_test_split(
        digits.data / 16.0, digits.target, test_size=0.3, random_state=seed
    )
    data = (x_train, y_train, x_val, y_val, np.unique(digits.target))
    models = [Candidate(m, data, seed * 100 + i) for i, m in enumerate(CANDIDATES.values())]
    selector = ModelSelector(list(CANDIDATES), budget, policy, params=params, seed=seed)
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(workers) as pool:
        checkpoint = Path(tmp) / "selector.json"
        running: dict[Future[float], int] = {}
        while not selector.done:
            while len(running) < workers and selector.remaining > 0:
                idle = [i for i in range(len(models)) if i not in running.values()]
                arm = selector.select(available=idle)
                running[pool.submit(models[arm].train_step)] = arm
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                selector.update(running.pop(future), future.result())
                if selector.t == budget // 2:
                    selector.save(checkpoint)  # a long job would stop here ...
                    selector = ModelSelector.load(checkpoint)  # ... and resume later
    return selector.summary()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=600, help="training steps in total")
    parser.add_argument(
        "--policy",
        default=DEFAULT_POLICY,
        help=f"any risingbandits policy (default: {DEFAULT_POLICY})",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--param", action="append", default=[], help="policy NAME=VALUE")
    parser.add_argument("--workers", type=int, default=1, help="steps trained at once")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    params = parse_params(args.policy, args.param)
    summary = tune(args.budget, args.policy, args.seed, params, args.workers)
    if args.json:
        print(json.dumps(summary))
        return
    for name, steps in summary["pulls"].items():
        score = summary["last_scores"][name]
        shown = "never trained" if score is None else f"validation accuracy {score:.3f}"
        print(f"{name:<22} {steps:>5} steps   {shown}")
    print(
        f"{args.policy} recommends {summary['recommended']} (accuracy "
        f"{summary['recommended_score']:.3f}; best among the candidates "
        f"{summary['best_last_score']:.3f})"
    )


if __name__ == "__main__":
    main()
