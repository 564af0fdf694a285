"""Tune scikit-learn models that learn by ``partial_fit`` with a rising-bandit model selector.

Six candidate models share a budget of training steps on the digits data set bundled with
scikit-learn. Each step trains one candidate on its next mini-batch of 32 samples and reports
its validation accuracy; CURE-UCB (``risingbandits.modelselect.ModelSelector``) decides which
candidate gets the next step, aiming at the one that will be best when the budget runs out.
Halfway, the selector is saved to a JSON checkpoint and restored, as a long tuning job would be.

    pip install 'risingbandits[examples]'
    python examples/tune_sklearn_partial_fit.py [--budget 600] [--policy cure-ucb] [--seed 0]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin, clone
from sklearn.datasets import load_digits
from sklearn.linear_model import Perceptron, SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

from risingbandits.modelselect import ModelSelector

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

    def __init__(self, model: ClassifierMixin, n_train: int, rng: np.random.Generator) -> None:
        self.model = clone(model)
        self.order = rng.permutation(n_train)
        self.rng = rng
        self.position = 0

    def train_step(self, x: np.ndarray, y: np.ndarray, classes: np.ndarray) -> None:
        if self.position + BATCH > self.order.size:
            self.order, self.position = self.rng.permutation(self.order.size), 0
        rows = self.order[self.position : self.position + BATCH]
        self.position += BATCH
        self.model.partial_fit(x[rows], y[rows], classes=classes)


def tune(budget: int = 600, policy: str = "cure-ucb", seed: int = 0) -> dict[str, Any]:
    """Spend ``budget`` training steps under ``policy``; returns pulls and scores per model."""
    digits = load_digits()
    x_train, x_val, y_train, y_val = train_test_split(
        digits.data / 16.0, digits.target, test_size=0.3, random_state=seed
    )
    classes = np.unique(digits.target)
    rng = np.random.default_rng(seed)
    models = [Candidate(m, len(y_train), rng) for m in CANDIDATES.values()]
    selector = ModelSelector(list(CANDIDATES), budget, policy, seed=seed)
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = Path(tmp) / "selector.json"
        while not selector.done:
            arm = selector.select()
            models[arm].train_step(x_train, y_train, classes)
            selector.update(arm, models[arm].model.score(x_val, y_val))
            if selector.t == budget // 2:
                selector.save(checkpoint)  # a long job would stop here ...
                selector = ModelSelector.load(checkpoint)  # ... and resume later
    pulls = selector.pulls
    return {
        "names": list(CANDIDATES),
        "pulls": pulls,
        "scores": selector.last_scores,
        "chosen": int(np.argmax(pulls)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=600, help="training steps in total")
    parser.add_argument("--policy", default="cure-ucb", help="any risingbandits policy")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    result = tune(args.budget, args.policy, args.seed)
    for name, n, score in zip(result["names"], result["pulls"], result["scores"], strict=True):
        shown = "never trained" if np.isnan(score) else f"validation accuracy {score:.3f}"
        print(f"{name:<22} {n:>5} steps   {shown}")
    best = result["names"][result["chosen"]]
    print(f"{args.policy} spent most of the budget on: {best}")


if __name__ == "__main__":
    main()
