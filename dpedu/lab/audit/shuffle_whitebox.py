r"""A white-box audit of *shuffled* DP-SGD runs: the pair of docs/math.md §22.6 trained for real.

:func:`dpedu.lab.audit.shuffle.shuffle_epsilon_lower_bound` draws the outputs of the §22.6 pair from its formula.
Here the same pair is two data sets given to :func:`dpedu.textbook.training.dp_sgd` with ``sampling="shuffle"``
(:func:`shuffle_audit_data`), and the auditor of docs/math.md §20.2 sees every update. One coordinate, rows of
norm K so large that every gradient is clipped to exactly C (the auditor checks it at every step):

* **add/remove**: the other records are rows of zeros (gradient 0); the differing record has gradient +C.
* **replace-one**: the other records have gradient -C; the differing record's +C becomes -C.

Every fixed-size batch of m records then sums to a known value except for the differing record, so the
update of step t, centred by that value and in units of the spike :math:`hC` (h = 1 or 2), is
:math:`y_t \sim \mathcal N(e_t, (z/h)^2)` in the first data set and :math:`\mathcal N(0, (z/h)^2)` in the
second: the pair's outputs, now produced by the training code. The auditor scores a run by the pair's privacy
loss :math:`\sum_e L(y_e)` (:func:`dpedu.lab.audit.shuffle.epoch_privacy_losses`, the Neyman-Pearson statistic of
the pair) and bounds a threshold test with Clopper-Pearson (docs/math.md §20.1): the threshold is chosen on
the first half of the runs, the error rates are counted on the second. No model of the runs is assumed, so the
bound holds for whatever the code does; it is at most the pair's own epsilon, which the Monte Carlo bound
estimates, and approaches it as the runs grow (the likelihood-ratio test is optimal for the pair).

>>> r = shuffle_whitebox_audit(1.0, batches_per_epoch=4, epochs=1, relation="replace_one", runs=200,
...                            delta=1e-3, rng=0)
>>> 0 < r.epsilon_lower
True
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ...accountants import make_accountant
from ...ground.events import REPLACE_ONE, SubsampledGaussianEvent, check_relation
from ..parallel import check_n_jobs, map_seeded
from ...textbook.training import ShuffledBatchesWarning, plan_dp_sgd, run_dp_sgd
from ...ground.validation import check_choice, check_confidence, check_delta, check_noise_multiplier, check_positive_int
from .shuffle import epoch_privacy_losses
from .whitebox import observe_every_theta
from .statistics import best_threshold, error_counts, rate_bounds_epsilon

__all__ = ["shuffle_audit_data", "observed_updates", "shuffle_whitebox_audit", "ShuffleAuditResult",
           "AUDIT_SAMPLINGS"]

AUDIT_SAMPLINGS = ("shuffle", "poisson")
#: Row norm K of the records with a gradient: K sigma(-K |theta|) >= C keeps every gradient clipped to C.
ROW_NORM = 100.0
#: The learning rate of the audited runs: small, so theta stays where the clipping is exact.
LEARNING_RATE = 1e-6


def shuffle_audit_data(batches_per_epoch, batch_size, relation="add_remove"):
    r"""The §22.6 pair as data sets ``((X_in, y_in), (X_out, y_out))``: with the differing record first.

    One feature. Under add/remove, ``X_out`` is b m rows of zeros and ``X_in`` adds the record (K, label -1):
    both have :math:`\lfloor n/m\rfloor = b` batches per epoch (so the record misses an epoch with probability
    1/(b m + 1), which only weakens the pair). Under replace-one both have b m rows (K, label +1), gradient -C,
    and in ``X_in`` the first row's label is -1 (gradient +C).
    """
    b = check_positive_int(batches_per_epoch, "batches_per_epoch")
    m = check_positive_int(batch_size, "batch_size")
    if b < 2 or m < 2:
        raise ValueError(f"batches_per_epoch and batch_size must be >= 2; got {b} and {m}")
    if check_relation(relation) == REPLACE_ONE:
        X = np.full((b * m, 1), ROW_NORM)
        y_out = np.ones(b * m)
        y_in = y_out.copy()
        y_in[0] = -1.0
        return (X, y_in), (X.copy(), y_out)
    X_out, y_out = np.zeros((b * m, 1)), np.ones(b * m)
    return (np.vstack([[[ROW_NORM]], X_out]), np.append(-1.0, y_out)), (X_out, y_out)


def observed_updates(X, y, plan, *, rng):
    r"""The updates :math:`\tilde g_t = (\theta_{t-1} - \theta_t)\,\mathrm{divisor}/\eta` of one run of
    :func:`dpedu.textbook.training.run_dp_sgd` with ``plan`` on (X, y), logistic regression from 0, every update kept.

    Returns ``(updates, thetas)``, shapes (T, P) and (T + 1, P).
    """
    theta0 = np.zeros(np.shape(X)[1])
    thetas = observe_every_theta(lambda observe: run_dp_sgd(X, y, plan, theta0=theta0, rng=rng, observe=observe),
                                 theta0)
    return (thetas[:-1] - thetas[1:]) * (plan.divisor / plan.learning_rate), thetas


class _AuditTask:
    """One pair of runs (first data set, second) reduced to the pair's privacy loss (picklable)."""

    def __init__(self, worlds, plans, known_sum, height, z, shape):
        self.worlds, self.plans, self.known_sum = worlds, plans, known_sum
        self.height, self.z, self.shape = height, z, shape

    def __call__(self, rng):
        out = []
        for (X, y), plan, g in zip(self.worlds, self.plans, rng.spawn(2)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ShuffledBatchesWarning)
                updates, thetas = observed_updates(X, y, plan, rng=g)
            if ROW_NORM / (1.0 + math.exp(ROW_NORM * np.abs(thetas).max())) < plan.clip_norm:
                raise RuntimeError("theta left the region where every gradient is clipped to C")
            spikes = (updates[:, 0] - self.known_sum) / (self.height * plan.clip_norm)
            out.append(float(epoch_privacy_losses(spikes.reshape(self.shape), self.z / self.height)))
        return out[0], out[1]


@dataclass
class ShuffleAuditResult:
    """What :func:`shuffle_whitebox_audit` measured, beside the Poisson PLD number for the same (z, q, T)."""

    epsilon_lower: float
    poisson_upper: float
    statistics_in: np.ndarray
    statistics_out: np.ndarray
    noise_multiplier: float
    batches_per_epoch: int
    epochs: int
    relation: str
    sampling: str
    delta: float
    confidence: float
    runs: int
    seconds: float

    def __str__(self):
        return (f"white-box audit of {self.runs} + {self.runs} DP-SGD runs (sampling={self.sampling!r}, "
                f"{self.relation}, z = {self.noise_multiplier:g}, b = {self.batches_per_epoch}, "
                f"E = {self.epochs}): epsilon >= {self.epsilon_lower:.4f} ({self.confidence:.0%}); Poisson PLD "
                f"upper bound {self.poisson_upper:.4f} (delta = {self.delta:g}; {self.seconds:.1f} s)")


def shuffle_whitebox_audit(noise_multiplier, *, batches_per_epoch, epochs, relation="add_remove", batch_size=4,
                           sampling="shuffle", runs=2000, delta=1e-3, confidence=0.95, rng=None, n_jobs=1):
    r"""Lower bound on epsilon at ``delta`` from ``runs`` pairs of real DP-SGD runs on the §22.6 pair.

    Each pair trains :func:`dpedu.textbook.training.dp_sgd`'s steps with ``sampling`` (``"shuffle"``: the audited
    scheme; ``"poisson"``: the same auditor on correct Poisson runs, whose bound must stay below their PLD
    epsilon) at q = 1 / ``batches_per_epoch`` for ``epochs`` * ``batches_per_epoch`` steps on each data set of
    :func:`shuffle_audit_data`; the auditor reads every update (:func:`observed_updates`) and scores the run by
    the pair's privacy loss. A threshold test then gives the bound as in docs/math.md §20.1 (threshold from the
    first half of the runs, Clopper-Pearson on the second, both rates at level :math:`1 - (1-c)/2`); with
    probability at least ``confidence`` the true epsilon of the audited training is at least it (§20.2,
    §22.6). One generator per pair (:func:`dpedu.lab.parallel.map_seeded`): the same result for any ``n_jobs``.

    Returns
    -------
    ShuffleAuditResult
    """
    z = check_noise_multiplier(noise_multiplier)
    b = check_positive_int(batches_per_epoch, "batches_per_epoch")
    epochs = check_positive_int(epochs, "epochs")
    relation = check_relation(relation)
    sampling = check_choice(sampling, "sampling", AUDIT_SAMPLINGS)
    runs = check_positive_int(runs, "runs")
    if runs < 4:
        raise ValueError(f"runs must be >= 4; got {runs}")
    delta, confidence, n_jobs = check_delta(delta), check_confidence(confidence), check_n_jobs(n_jobs)
    if rng is None:
        raise TypeError("rng must be a numpy.random.Generator or a seed: the audit trains random runs")
    worlds = shuffle_audit_data(b, batch_size, relation)
    plans = [plan_dp_sgd(X.shape[0], noise_multiplier=z, clip_norm=1.0, sampling_rate=1.0 / b, steps=b * epochs,
                         learning_rate=LEARNING_RATE, sampling=sampling, relation=relation) for X, _ in worlds]
    height = 2.0 if relation == REPLACE_ONE else 1.0
    known_sum = -plans[1].divisor if relation == REPLACE_ONE else 0.0   # the other records' sum (random if Poisson)
    start = time.perf_counter()
    pairs = map_seeded(_AuditTask(worlds, plans, known_sum, height, z, (epochs, b)), runs, rng=rng, n_jobs=n_jobs,
                       desc="shuffle audit", unit="pairs of runs")
    s_in, s_out = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    half, alpha = runs // 2, 1.0 - confidence
    tau = best_threshold(s_in[:half], s_out[:half], delta, alpha / 2)
    fp, fn = error_counts(s_in[half:], s_out[half:], [tau])
    eps = float(rate_bounds_epsilon(fp, runs - half, fn, runs - half, delta, alpha / 2)[0][0])
    upper = make_accountant("pld").compose(SubsampledGaussianEvent(z, 1.0 / b, relation=relation),
                                           b * epochs).get_epsilon(delta)
    return ShuffleAuditResult(epsilon_lower=eps, poisson_upper=float(upper), statistics_in=s_in, statistics_out=s_out,
                              noise_multiplier=z, batches_per_epoch=b, epochs=epochs, relation=relation,
                              sampling=sampling, delta=delta, confidence=confidence, runs=runs,
                              seconds=time.perf_counter() - start)
