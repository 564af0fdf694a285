"""The digits data set split for the integration examples, and one training step of a
scikit-learn ``partial_fit`` model (mini-batches of :data:`BATCH` samples, reshuffled each
pass). Shared by ``optuna_partial_fit.py``, ``ray_tune_partial_fit.py`` and
``select_partial_fit_step.py``; needs ``pip install 'risingbandits[examples]'``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split

BATCH = 32


@dataclass
class Digits:
    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    classes: np.ndarray


def digits(seed: int = 0) -> Digits:
    """70 % training, 30 % validation (the same split for a given seed)."""
    data = load_digits()
    x_train, x_val, y_train, y_val = train_test_split(
        data.data / 16.0, data.target, test_size=0.3, random_state=seed
    )
    return Digits(x_train, y_train, x_val, y_val, np.unique(data.target))


class Learner:
    """An ``SGDClassifier`` trained one mini-batch per step; picklable as a checkpoint."""

    def __init__(self, loss: str, alpha: float, n_train: int, seed: int) -> None:
        self.model = SGDClassifier(loss=loss, alpha=alpha, random_state=seed)
        self.rng = np.random.default_rng(seed)
        self.order = self.rng.permutation(n_train)
        self.position = 0
        self.steps = 0

    def step(self, data: Digits) -> float:
        """Train on the next mini-batch; returns the validation accuracy."""
        if self.position + BATCH > self.order.size:
            self.order, self.position = self.rng.permutation(self.order.size), 0
        rows = self.order[self.position : self.position + BATCH]
        self.position += BATCH
        self.model.partial_fit(data.x_train[rows], data.y_train[rows], classes=data.classes)
        self.steps += 1
        return float(self.model.score(data.x_val, data.y_val))
