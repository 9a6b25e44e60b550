r"""Shadow models for membership inference: a pool of records, many trainings on random halves of it, and what
each trained model says about each record (docs/math.md §20.5).

The experimental design of Carlini et al. (2022): every record of a pool joins each training independently with
probability 1/2, so every model is a training on a random half, and every record is a member (IN) of about half
the models and a non-member (OUT) of the others. Any one model can then play the *target* while the others play
the attacker's *shadow* models (leave one model out), and every (model, record) pair is one trial of the
membership game. :func:`train_shadow_models` runs the trainings through :func:`dpedu.lab.parallel.map_seeded`
(one generator per model, the same result for any ``n_jobs`` or a Dask cluster) and keeps, for every model and
record, the **logit-scaled confidence** of the true label

.. math:: \phi = \ln\frac{p}{1-p}, \qquad p = \Pr_\theta[y \mid x] = \sigma(y\,f_\theta(x)) \ \Rightarrow\
          \phi = y\,f_\theta(x),

exact for dpedu's models, whose output :math:`f_\theta(x)` is the log-odds of the label +1 (Carlini et al. 2022
compute it from the probabilities; here no rounding of :math:`p` near 1 can occur).

Average Adult rows reveal little: a model of 100 parameters fitted to a thousand rows cannot remember one of them.
:func:`adult_membership_pool` therefore adds the records an attacker would go for, in two groups that the
attacks report apart:

* ``"outliers"``: pool rows that hold a category at most ``rare_count`` rows of the pool hold (natural
  outliers: the model's weight for that category is learned from these few rows, so each of them moves it);
* ``"canaries"``: inserted rows, each a held-out Adult row whose native country is replaced by a category of its
  own (a column no other record uses) and whose label is flipped. Only the canary informs the weight of its own
  column, and the flipped label makes the rest of the model push against it: the worst case the definition
  of DP must cover, built from a real row.

>>> pool = adult_membership_pool(n_records=200, n_canaries=5, n_population=50, rng=0)
>>> pool.X.shape, pool.groups["canaries"].size, pool.X_population.shape[0]
((205, 109), 5, 50)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..parallel import check_n_jobs, map_seeded
from ...ground.validation import (
    check_features, check_labels, check_nonnegative, check_positive, check_positive_int, check_rng, check_sampling_rate
)
from ...ground.events import steps_from_epochs
from ...textbook.models import MLP, LogisticModel
from ...textbook.training import TrainingResult, plan_dp_sgd, run_dp_sgd

__all__ = ["MembershipPool", "adult_membership_pool", "ShadowTrainer", "ShadowModels", "train_shadow_models",
           "group_indices", "MODELS", "MAX_MODELS", "MIN_POOL"]

MODELS = ("logistic", "mlp")
MAX_MODELS = 10_000          # trainings per experiment (a documented bound: memory is models x records)
MIN_POOL = 20                # records: a random half is empty with probability 2**-n


@dataclass(frozen=True, eq=False)
class MembershipPool:
    """Records for a membership experiment: the pool ``X, y`` (each record joins each training with probability
    1/2), named groups of row indices (``"canaries"``, ``"outliers"``), and population records ``X_population,
    y_population`` that no training ever sees (RMIA compares every record with them)."""

    X: np.ndarray
    y: np.ndarray
    groups: dict
    X_population: np.ndarray
    y_population: np.ndarray
    feature_names: tuple = ()
    description: str = ""

    @property
    def n(self):
        """Records in the pool."""
        return self.X.shape[0]

    def group(self, name):
        """Row indices of group ``name``: ``"all"`` (every pool record), ``"vulnerable"`` (the union of the named
        groups) or a named group."""
        return group_indices(self.groups, self.n, name)


def group_indices(groups, n, name):
    """Record indices of ``name`` among ``n`` records: ``"all"``, ``"vulnerable"`` (the union of ``groups``, a
    dict of index arrays) or a key of ``groups``."""
    if name == "all":
        return np.arange(n)
    if name == "vulnerable":
        parts = [np.asarray(v, dtype=np.int64) for v in groups.values()]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
    if not isinstance(name, str) or name not in groups:
        raise ValueError(f"group must be 'all', 'vulnerable' or one of {sorted(groups)}; got {name!r}")
    return np.asarray(groups[name], dtype=np.int64)


def _is_zero(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value == 0


def adult_membership_pool(n_records=1000, n_canaries=50, n_population=1000, *, rare_count=3, rng=0, data_home=None):
    """A :class:`MembershipPool` from the Adult data: ``n_records`` rows of the training file, ``n_canaries``
    inserted canaries and ``n_population`` held-out rows, all drawn with ``rng``.

    The groups (module docstring): ``"outliers"`` are the drawn rows holding a one-hot category that at most
    ``rare_count`` of the drawn rows hold; ``"canaries"`` are the last ``n_canaries`` rows, each a row
    of the test file with its ``native-country`` one-hot moved to a new column of its own and its label flipped.
    Every record gets the ``n_canaries`` new columns (zero except a canary's own), so rows keep one country each
    and their norms. The population rows are other rows of the test file, disjoint from the canaries' sources.

    Bounds: ``n_records`` at most the 30 162 rows of the training file, ``n_canaries + n_population`` at most the
    15 060 of the test file. ``data_home`` is where :func:`dpedu.textbook.datasets.load_adult` looks first.
    """
    from ...textbook.datasets import load_adult

    adult = load_adult(data_home)
    n_records = check_positive_int(n_records, "n_records", maximum=adult.n_train)
    n_canaries = 0 if _is_zero(n_canaries) else check_positive_int(n_canaries, "n_canaries", maximum=adult.n_test)
    if n_records + n_canaries < MIN_POOL:
        raise ValueError(f"n_records + n_canaries must be >= {MIN_POOL}; got {n_records} + {n_canaries}")
    n_population = check_positive_int(n_population, "n_population", maximum=adult.n_test - n_canaries)
    rare_count = check_positive_int(rare_count, "rare_count")
    rng = check_rng(rng)
    names = adult.feature_names
    onehot = np.array([i for i, name in enumerate(names) if "=" in name])
    rows = rng.choice(adult.n_train, n_records, replace=False)
    counts = (adult.X_train[rows][:, onehot] != 0).sum(axis=0)
    rare = onehot[(counts > 0) & (counts <= rare_count)]
    held_out = rng.permutation(adult.n_test)[:n_canaries + n_population]
    extra = np.zeros((1, n_canaries))
    X = np.hstack([adult.X_train[rows], np.zeros((n_records, n_canaries))])
    y = adult.y_train[rows]
    outliers = np.flatnonzero((adult.X_train[rows][:, rare] != 0).any(axis=1))
    country = [i for i, name in enumerate(names) if name.startswith("native-country=")]
    canaries = np.hstack([adult.X_test[held_out[:n_canaries]], np.eye(n_canaries)])
    canaries[:, country] = 0.0                                        # its country: a column of its own
    X = np.vstack([X, canaries])
    y = np.concatenate([y, -adult.y_test[held_out[:n_canaries]]])     # and the label the data contradicts
    population = held_out[n_canaries:]
    X_pop = np.hstack([adult.X_test[population], np.repeat(extra, population.size, axis=0)])
    groups = {"canaries": np.arange(n_records, n_records + n_canaries), "outliers": outliers}
    feature_names = tuple(names) + tuple(f"native-country=canary {k}" for k in range(n_canaries))
    description = (f"Adult: {n_records} training-file rows ({outliers.size} outliers: a category held by <= "
                   f"{rare_count} of them) + {n_canaries} canaries (a country of their own, label flipped); "
                   f"{n_population} held-out population rows")
    return MembershipPool(X, y, groups, X_pop, adult.y_test[population], feature_names, description)


class ShadowTrainer:
    r"""``trainer(X, y, rng) -> TrainingResult``: DP-SGD on a logistic model or the 16-unit MLP, settings fixed.

    ``noise_multiplier=0`` is the non-private setting (with ``clip_norm=inf``: no clipping either). The sampling
    rate q and the number of steps T are fixed before any data is seen, so every training, whatever the size of
    its random half, performs the same privacy events (the ledger of ``plan_dp_sgd``: add/remove neighbours, n
    public). ``epochs`` sets :math:`T = \max(1, \mathrm{round}(\text{epochs}/q))`.
    """

    def __init__(self, *, model="logistic", noise_multiplier, clip_norm, sampling_rate, epochs, learning_rate=1.0,
                 hidden_units=16):
        if model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}; got {model!r}")
        self.model = model
        self.noise_multiplier = check_nonnegative(noise_multiplier, "noise_multiplier")
        self.clip_norm = check_positive(clip_norm, "clip_norm", allow_inf=self.noise_multiplier == 0)
        self.sampling_rate = check_sampling_rate(sampling_rate)
        self.steps = steps_from_epochs(check_positive(epochs, "epochs"), self.sampling_rate)
        self.learning_rate = check_positive(learning_rate, "learning_rate")
        self.hidden_units = check_positive_int(hidden_units, "hidden_units")
        plan_dp_sgd(100, noise_multiplier=self.noise_multiplier, clip_norm=self.clip_norm,    # refused now, not
                    sampling_rate=self.sampling_rate, steps=self.steps)                      # in a worker
        kind = "logistic regression" if model == "logistic" else f"MLP ({self.hidden_units} tanh units)"
        privacy = "non-private" if self.noise_multiplier == 0 else f"z = {self.noise_multiplier:.4g}"
        self.description = (f"{kind}, DP-SGD {privacy}, C = {self.clip_norm:g}, q = {self.sampling_rate:.4g}, "
                            f"T = {self.steps}, learning rate {self.learning_rate:g}")

    def __call__(self, X, y, rng):
        X = np.asarray(X, dtype=float)
        model = LogisticModel(X.shape[1]) if self.model == "logistic" else MLP(X.shape[1], self.hidden_units)
        plan = plan_dp_sgd(X.shape[0], noise_multiplier=self.noise_multiplier, clip_norm=self.clip_norm,
                           sampling_rate=self.sampling_rate, steps=self.steps, learning_rate=self.learning_rate)
        return run_dp_sgd(X, y, plan, model=model, rng=rng)


@dataclass(frozen=True, eq=False)
class ShadowModels:
    r"""What :func:`train_shadow_models` measured.

    Attributes
    ----------
    memberships : ndarray of bool, shape (K, N)
        ``memberships[k, i]``: record i was in model k's training set.
    signals : ndarray, shape (K, N)
        :math:`\phi_{k,i} = y_i f_{\theta_k}(x_i)`, the logit-scaled confidence of model k in record i's label.
    population_signals : ndarray, shape (K, P)
        The same for the population records (never trained on).
    ledger : list or None
        The privacy events of one training (all trainings perform the same); ``None`` for a non-private run.
    groups : dict
        The pool's named groups of record indices.
    description : str
    seconds : float
        Wall time of the trainings.
    """

    memberships: np.ndarray
    signals: np.ndarray
    population_signals: np.ndarray
    ledger: object
    groups: dict = field(default_factory=dict)
    description: str = ""
    seconds: float = 0.0

    @property
    def n_models(self):
        return self.signals.shape[0]

    @property
    def n_records(self):
        return self.signals.shape[1]

    def group(self, name):
        """Record indices of ``"all"``, ``"vulnerable"`` (the union of the named groups) or a named group."""
        return group_indices(self.groups, self.n_records, name)


class _ShadowTask:
    """One training on a random half of the pool (picklable): ``(memberships, signals, population signals, ledger)``."""

    def __init__(self, trainer, X, y, X_population, y_population):
        self.trainer, self.X, self.y = trainer, X, y
        self.X_population, self.y_population = X_population, y_population

    def __call__(self, rng):
        member = rng.random(self.X.shape[0]) < 0.5                   # Bernoulli(1/2) membership of every record
        result = self.trainer(self.X[member], self.y[member], rng)
        model = getattr(getattr(result, "details", None), "model", None)
        if not isinstance(result, TrainingResult) or model is None:
            raise TypeError(f"trainer must return the TrainingResult of a DP-SGD run (its details name the model); "
                            f"got {type(result).__name__}")
        signals = self.y * model.decision_function(result.theta, self.X)
        population = self.y_population * model.decision_function(result.theta, self.X_population)
        return member, signals, population, result.ledger


def train_shadow_models(pool, trainer, *, n_models, rng=None, n_jobs=1, progress=None):
    """Train ``n_models`` models, each on a random half of ``pool`` (every record in with probability 1/2).

    Parameters
    ----------
    pool : MembershipPool
        At least :data:`MIN_POOL` records and one population record.
    trainer : callable
        ``trainer(X, y, rng) -> TrainingResult`` of a DP-SGD run (``run_dp_sgd``: its ``details.model`` computes
        the signals), e.g. :class:`ShadowTrainer`; it must use only ``rng``. Its ``description`` (if any) is kept.
    n_models : int
        K, from 2 to :data:`MAX_MODELS`.
    rng : None, int, SeedSequence or Generator
        Root of the K generators (:func:`dpedu.lab.parallel.map_seeded`): model k's membership draws and its
        training use generator k only, so the result is the same for any ``n_jobs``.
    n_jobs : int
        joblib workers (``-1``: every core; a Dask cluster under ``joblib.parallel_backend("dask")``).
    progress : None, True or callable
        ``True``: a tqdm bar; a callable receives a message about every 10% of the trainings.

    Returns
    -------
    ShadowModels
    """
    if not isinstance(pool, MembershipPool):
        raise TypeError(f"pool must be a MembershipPool (e.g. adult_membership_pool()); got {type(pool).__name__}")
    if not callable(trainer):
        raise TypeError(f"trainer must be a callable trainer(X, y, rng) -> TrainingResult; got {trainer!r}")
    X = check_features(pool.X, "pool.X")
    y = check_labels(pool.y, X.shape[0], "pool.y")
    if X.shape[0] < MIN_POOL:
        raise ValueError(f"pool must hold at least {MIN_POOL} records; got {X.shape[0]}")
    X_pop = check_features(pool.X_population, "pool.X_population")
    y_pop = check_labels(pool.y_population, X_pop.shape[0], "pool.y_population")
    if X_pop.shape[1] != X.shape[1]:
        raise ValueError(f"pool.X_population has {X_pop.shape[1]} columns but pool.X has {X.shape[1]}")
    n_models = check_positive_int(n_models, "n_models", maximum=MAX_MODELS)
    if n_models < 2:
        raise ValueError(f"n_models must be >= 2 (one target, at least one shadow); got {n_models}")
    n_jobs = check_n_jobs(n_jobs)
    start = time.perf_counter()
    out = map_seeded(_ShadowTask(trainer, X, y, X_pop, y_pop), n_models, rng=rng, n_jobs=n_jobs, progress=progress,
                     desc="shadow models", unit="trainings")
    ledger = out[0][3]
    if any(o[3] != ledger for o in out[1:]):
        raise ValueError("the trainings performed different privacy events: every shadow model must be trained "
                         "by the same algorithm with the same settings")
    return ShadowModels(memberships=np.array([o[0] for o in out]), signals=np.array([o[1] for o in out]),
                        population_signals=np.array([o[2] for o in out]), ledger=ledger, groups=dict(pool.groups),
                        description=getattr(trainer, "description", ""), seconds=time.perf_counter() - start)
