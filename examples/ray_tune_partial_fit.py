"""Select among scikit-learn ``SGDClassifier`` models on digits with Ray Tune, a rising-bandit
policy deciding which paused trial trains its next mini-batch.

Each Tune trial trains one model; every iteration it reports its validation accuracy with a
checkpoint (the pickled model), so that ``RisingBanditScheduler`` can pause it and resume it
later, on any worker of the cluster. Ray runs locally with ``--cpus`` CPUs and its processes end
with this script, also when it is killed.

    pip install 'risingbandits[ray,examples]'
    python examples/ray_tune_partial_fit.py [--budget 60] [--cpus 2] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

from digits_steps import Learner, digits
from ray import tune

from risingbandits.integrations.ray_tune import RisingBanditScheduler, local_ray
from risingbandits.modelselect import DEFAULT_POLICY

# --8<-- [start:trainable]
SPACE = {
    "loss": tune.grid_search(["log_loss", "hinge", "modified_huber"]),
    "alpha": tune.grid_search([1e-4, 1e-2]),
}


def train(config: dict[str, Any]) -> None:
    """A Tune trainable: one mini-batch per iteration, resumed from its checkpoint."""
    data = digits(config["seed"])
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as folder:
            learner = pickle.loads(Path(folder, "learner.pkl").read_bytes())
    else:
        learner = Learner(config["loss"], config["alpha"], len(data.y_train), config["seed"])
    while True:
        accuracy = learner.step(data)
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, "learner.pkl").write_bytes(pickle.dumps(learner))
            tune.report(
                {"accuracy": accuracy, "steps": learner.steps},
                checkpoint=tune.Checkpoint.from_directory(folder),
            )


# --8<-- [end:trainable]
def select(budget: int = 60, policy: str = DEFAULT_POLICY, seed: int = 0, cpus: int = 2) -> dict:
    """Spend ``budget`` iterations over the six trials; returns the scheduler's summary."""
    # --8<-- [start:scheduler]
    scheduler = RisingBanditScheduler(budget, policy=policy, seed=seed)
    with (
        local_ray(num_cpus=cpus, log_to_driver=False),
        tempfile.TemporaryDirectory() as out,
        contextlib.redirect_stdout(sys.stderr),  # Tune's own tables: stdout is for the result
    ):
        results = tune.Tuner(
            train,
            param_space={**SPACE, "seed": seed},
            tune_config=tune.TuneConfig(
                metric="accuracy", mode="max", scheduler=scheduler, reuse_actors=True
            ),
            run_config=tune.RunConfig(storage_path=out, verbose=0),
        ).fit()
        configs = {r.metrics["trial_id"]: r.config for r in results}
    summary = scheduler.summary()
    # --8<-- [end:scheduler]
    return {**summary, "configs": {t: configs[t] for t in summary["pulls"]}}


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=60, help="training iterations in total")
    parser.add_argument("--policy", default=DEFAULT_POLICY, help="any risingbandits policy")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray instance")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser.parse_args(argv)


def main() -> None:
    args = arguments()
    result = select(args.budget, args.policy, args.seed, args.cpus)
    if args.json:
        print(json.dumps(result))
        return
    for trial, pulls in result["pulls"].items():
        config, score = result["configs"][trial], result["last_scores"][trial]
        shown = "never trained" if score is None else f"accuracy {score:.3f}"
        print(
            f"{trial}  {config['loss']:<15} alpha={config['alpha']:.0e}  {pulls:>3} steps  {shown}"
        )
    print(
        f"recommended: {result['recommended']} (accuracy {result['recommended_score']:.3f}; "
        f"best last accuracy {result['best_last_score']:.3f})"
    )


if __name__ == "__main__":
    main()
