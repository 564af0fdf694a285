"""One training step of one scikit-learn model, for ``risingbandits select`` (any command that
trains its candidate one step and prints its score on its last line would do).

The model lives in ``STATE/<name>.pkl``; each call trains it on its next mini-batch of digits
and prints the validation accuracy. The step number comes from ``RISINGBANDITS_STEP``: a step
already saved (the driver was interrupted before it recorded the score) is not trained twice.
The pickles are loaded, so ``STATE`` must be a folder only this user can write (created with
mode 0700; one another user could write or replace is refused: their file would run here).

    pip install 'risingbandits[examples]'
    risingbandits select --budget 60 --workers 2 --json \\
        "python examples/select_partial_fit_step.py --loss log_loss --alpha 1e-4 --state runs" \\
        "python examples/select_partial_fit_step.py --loss hinge --alpha 1e-2 --state runs" \\
        "python examples/select_partial_fit_step.py --loss modified_huber --alpha 1e-3 --state runs"
"""

from __future__ import annotations

import argparse
import os
import pickle
from pathlib import Path

from digits_steps import Learner, digits

from risingbandits.user_cache import NotPrivate, private_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loss", default="log_loss", help="SGDClassifier loss")
    parser.add_argument("--alpha", type=float, default=1e-4, help="SGDClassifier alpha")
    parser.add_argument("--state", type=Path, required=True, help="folder of the models")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    step = int(os.environ.get("RISINGBANDITS_STEP", "1"))
    try:
        state = private_dir(args.state)
    except NotPrivate as exc:
        raise SystemExit(f"--state={str(args.state)!r} is not allowed: {exc}") from None
    path = state / f"{args.loss}-{args.alpha:g}.pkl"
    data = digits(args.seed)
    if path.exists():
        learner, score = pickle.loads(path.read_bytes())
    else:
        learner, score = Learner(args.loss, args.alpha, len(data.y_train), args.seed), None
    if learner.steps == step - 1:
        score = learner.step(data)
        part = path.with_name(path.name + ".part")
        part.write_bytes(pickle.dumps((learner, score)))
        part.replace(path)  # a killed step leaves the previous state whole
    elif learner.steps != step:
        raise SystemExit(f"{path} holds {learner.steps} steps; step {step} cannot follow them")
    print(score)


if __name__ == "__main__":
    main()
