r"""Private selection: tune hyperparameters on private data and pay for it (docs/math.md §23).

Trying k configurations and keeping the best costs k runs' privacy by composition. Liu & Talwar (2019)
and Papernot & Steinke (2022) showed a cheaper way: run a *random* number K of trainings, each with a
random configuration and a *privately computed* score, and release only the best one. The whole
procedure is then private at a cost that grows only with :math:`\ln \mathbb E[K]`:
:func:`private_selection` does that and returns the
:class:`~dpedu.ground.events.RepeatAndSelectEvent` the RDP accountant accounts.

What must stay secret, for the theorem to hold: the number of runs K, the other runs' configurations,
models and scores. What must be private: each run's score, which is part of the run's release (e.g. a
Laplace-noised count of correct predictions on a private validation split, whose event belongs in the
run's ledger; or a score on *public* data, which costs nothing).

>>> import numpy as np
>>> from dpedu.ground.events import GaussianEvent
>>> def train(config, rng):                            # a toy run: a noisy score, nothing else
...     score = config["x"] + rng.normal(0, 1.0)
...     return config["x"], score, [(GaussianEvent(1.0), 1)]
>>> result = private_selection(train, {"x": [0.0, 1.0, 2.0]}, [(GaussianEvent(1.0), 1)], mean_trials=5, rng=0)
>>> result.event.mean, result.config in ({"x": 0.0}, {"x": 1.0}, {"x": 2.0})
(5.0, True)
>>> result == private_selection(train, {"x": [0.0, 1.0, 2.0]}, [(GaussianEvent(1.0), 1)], mean_trials=5, rng=0)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..accountants import RepeatAndSelectEvent, as_ledger
from ..accountants.analysis.composition import group_ledger
from ..accountants.analysis.trials import sample_trials
from .parallel import check_n_jobs, map_seeded
from ..ground.validation import check_rng, check_scalar

__all__ = ["Selection", "private_selection", "sample_config", "check_search_space"]


@dataclass(frozen=True)
class Selection:
    """What :func:`private_selection` releases: the best run, and the event of the whole procedure.

    Attributes
    ----------
    config : dict or None
        The best run's configuration; ``None`` when K = 0 (possible only for a Poisson K): nothing ran.
    model : object
        What the best run's ``train`` returned as its model (``None`` when K = 0).
    score : float or None
        The best run's private score.
    event : RepeatAndSelectEvent
        The privacy of the whole procedure, whatever K was: account it with the ``'rdp'`` accountant.
        K itself is not released (docs/math.md §23.5).
    """

    config: Any
    model: Any
    score: Any
    event: RepeatAndSelectEvent


def check_search_space(search_space):
    """``search_space`` unchanged if :func:`sample_config` can draw from it, else ``TypeError`` naming it."""
    if callable(search_space):
        return search_space
    if not isinstance(search_space, dict) or not search_space:
        raise TypeError(f"search_space must be a non-empty dict {{name: choices}} or a callable rng -> dict; got "
                        f"{search_space!r}")
    for name, choices in search_space.items():
        if not (hasattr(choices, "rvs") or (isinstance(choices, (list, tuple)) and choices)):
            raise TypeError(f"search_space[{name!r}] must be a non-empty list or tuple of values or a distribution "
                            f"with rvs(); got {choices!r}")
    return search_space


def sample_config(search_space, rng):
    """One configuration drawn from ``search_space`` with the generator ``rng``.

    Parameters
    ----------
    search_space : dict or callable
        ``{name: choices}`` where each entry is a list or tuple of values (one is drawn uniformly) or an
        object with ``rvs(random_state=...)`` (a ``scipy.stats`` distribution); names are drawn in sorted
        order. Or a callable ``search_space(rng) -> dict``.
    rng : numpy.random.Generator

    Returns
    -------
    dict

    Examples
    --------
    >>> import numpy as np
    >>> sample_config({"lr": [0.1, 1.0], "clip": (1.0,)}, np.random.default_rng(0))["clip"]
    1.0
    """
    if callable(check_search_space(search_space)):
        config = search_space(rng)
        if not isinstance(config, dict):
            raise TypeError(f"search_space(rng) must return a dict; got {type(config).__name__} {config!r}")
        return config
    config = {}
    for name in sorted(search_space):
        choices = search_space[name]
        if hasattr(choices, "rvs"):
            config[name] = choices.rvs(random_state=rng)
        else:
            config[name] = choices[int(rng.integers(len(choices)))]
    return config


class _Trial:
    """One run: ``train(config, rng)``, its score and ledger checked (a class, so it pickles for n_jobs)."""

    def __init__(self, train, run_ledger):
        self.train, self.run_ledger = train, run_ledger

    def __call__(self, config, rng):
        returned = self.train(config, rng)
        if not (isinstance(returned, tuple) and len(returned) == 3):
            raise TypeError(f"train(config, rng) must return (model, score, ledger); got {returned!r}")
        model, score, ledger = returned
        score = check_scalar(score, "the score train returned")
        if math.isinf(score):
            raise ValueError(f"the score train returned must be finite; got {score!r} for config {config!r}")
        if group_ledger(as_ledger(ledger)) != group_ledger(self.run_ledger):
            raise ValueError(f"the run with config {config!r} released {as_ledger(ledger)!r}, not run_ledger "
                             f"{list(self.run_ledger)!r}: every run must be the same private mechanism "
                             f"(docs/math.md §23.5) - search only over settings that do not change the privacy")
        return model, score


def private_selection(train, search_space, run_ledger, *, mean_trials, shape=1.0, rng=None, n_jobs=1):
    r"""Train K times with random configurations, release only the best run (docs/math.md §23.5).

    Parameters
    ----------
    train : callable
        ``train(config, rng) -> (model, score, ledger)``: one private run with configuration ``config``,
        using only the generator ``rng``. ``score`` (higher is better) must be computed privately, and
        ``ledger`` must list everything the run released *including the score* (e.g. a ``LaplaceEvent``
        for a noisy count of correct validation predictions); a score on public data costs nothing.
    search_space : dict or callable
        Where configurations are drawn from, independently of the data (:func:`sample_config`).
    run_ledger : ledger
        The ledger of ONE run, the same for every configuration; each run's returned ledger is checked
        against it (a ``ValueError`` names the configuration that differs).
    mean_trials : float
        :math:`\mathbb E[K]`: > 1 for the truncated negative binomial, >= 1 for Poisson.
    shape : float, default 1.0
        :math:`\eta`: 1 geometric (Liu & Talwar's choice), 0 logarithmic, any value in (-1, inf), or
        ``math.inf`` for Poisson (then K = 0 is possible and releases nothing).
    rng : None, int, SeedSequence or Generator
        Draws K, then the K configurations, then one child generator per run (spawned), so the result
        does not depend on ``n_jobs``.
    n_jobs : int, default 1
        Runs in parallel through :func:`dpedu.lab.parallel.map_seeded`; ``train`` must then pickle.

    Returns
    -------
    Selection
        The best run's ``config``, ``model`` and ``score`` (the first of equal scores; ties have
        probability 0 for a continuous noisy score), and ``event``: the
        :class:`~dpedu.ground.events.RepeatAndSelectEvent` of the procedure. K is not returned: releasing it
        would void the theorem.

    Notes
    -----
    The algorithm of Papernot & Steinke (2022), §3: draw :math:`K \sim \mathcal D`; for
    :math:`j = 1..K` draw a configuration :math:`c_j` and run :math:`(m_j, s_j) \leftarrow Q(c_j)`;
    release :math:`\arg\max_j s_j`. Its privacy is Thm 2 (truncated negative binomial) or Thm 6
    (Poisson) applied to one run's RDP curve (docs/math.md §23.2-23.3).
    """
    event = RepeatAndSelectEvent(run_ledger, mean_trials, shape)   # checks the ledger, the mean and the shape
    if not callable(train):
        raise TypeError(f"train must be a callable train(config, rng) -> (model, score, ledger); got {train!r}")
    check_search_space(search_space)
    n_jobs = check_n_jobs(n_jobs)
    rng = check_rng(rng)
    trials = sample_trials(event.mean, event.shape, rng)
    if trials == 0:
        return Selection(config=None, model=None, score=None, event=event)
    configs = [sample_config(search_space, rng) for _ in range(trials)]
    runs = map_seeded(_Trial(train, event.run_ledger), trials, rng=rng, items=configs, n_jobs=n_jobs)
    best = max(range(trials), key=lambda j: (runs[j][1], -j))
    model, score = runs[best]
    return Selection(config=configs[best], model=model, score=score, event=event)
