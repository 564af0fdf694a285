"""Adapters that run rising-bandit model selection inside other tools.

One module per tool, each importing its tool only when used, so the library never depends on
them (a missing tool raises :class:`~risingbandits.extras.MissingExtra` naming the extra):

* :mod:`~risingbandits.integrations.optuna`: K Optuna trials, one rising-bandit choice per step
  (``pip install "risingbandits[optuna]"``);
* :mod:`~risingbandits.integrations.ray_tune`: a Ray Tune ``TrialScheduler``
  (``pip install "risingbandits[ray]"``);
* :mod:`~risingbandits.integrations.shell`: K shell commands, each training one step per call
  (standard library only; the ``risingbandits select`` command);
* :mod:`~risingbandits.integrations.lifetime`: processes started by an integration end with it.
"""
