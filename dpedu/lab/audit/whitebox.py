r"""White-box audit: the auditor sees every noisy update (Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski,
Carlini & Terzis 2023, "Tight Auditing of Differentially Private Machine Learning").

The accountants assume an adversary who sees every release :math:`\tilde g_t = \sum_{i\in B_t}
\mathrm{L2\_clip}(g_i, C) + \mathcal N(0,\sigma^2 I)` of a run. This auditor is that adversary. It plants a
**Dirac gradient canary**: a record whose gradient lives on coordinates where every other record's gradient
is exactly 0 (a feature no other row uses). Projected on the canary's clipped gradient :math:`c_t` there,
the update is

.. math:: s_t = \langle \tilde g_t, \hat c_t\rangle = b_t\,\lVert c_t\rVert + \mathcal N(0, \sigma^2),
          \qquad b_t = [\text{canary sampled at step } t],

so the canary's coordinate of the updates *is* the privacy loss one can see: nothing but the canary and the
noise. With full batches (:math:`b_t = 1`) and :math:`\lVert c_t\rVert = C`, the run statistic
:math:`S = \sum_t s_t` is :math:`\mathcal N(TC, T\sigma^2)` with the canary and :math:`\mathcal N(0,
T\sigma^2)` without: a :math:`\mu`-GDP pair with :math:`\mu = \sqrt T\,C/\sigma` (Dong, Roth & Su 2019), the
accountants' own worst case. :func:`whitebox_audit` estimates :math:`\mu` from ``runs`` runs per world with
an exact one-sided noncentral-t bound and converts it to epsilon on the Gaussian curve (docs/math.md §20.2).

With Poisson sampling (q < 1) the per-step pair is :math:`\mathcal N(0,\sigma^2)` against the mixture
:math:`(1-q)\mathcal N(0,\sigma^2) + q\mathcal N(C,\sigma^2)`, not Gaussian, so no mu describes it. The
auditor then scores each run by the log-likelihood ratio of the *claimed* mixture (the Neyman-Pearson
test against the claim) and bounds the error rates of a threshold test with Clopper-Pearson: model-free,
valid whatever the code does, but limited to about :math:`\ln(n/\ln(2/\alpha))` by the number of runs n.

>>> from dpedu.lab.audit.data import make_audit_data, make_canary
>>> X, y = make_audit_data(n=50, d=2, rng=0)
>>> train = observed_trainer(noise_multiplier=2.0, sampling_rate=1.0, steps=4)
>>> result = whitebox_audit(train, X, y, make_canary(X, y), runs=200, rng=0)
>>> 0 < result.epsilon_lower <= result.upper_bounds["pld"]
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ...textbook.clipping import L2_clip
from ...textbook.models import LogisticModel, Model
from ...textbook.training import plan_dp_sgd, run_dp_sgd
from ...textbook.training.sampling import Poisson
from ...ground.validation import check_choice, check_features, check_labels, check_positive_int, check_rng
from .canary import check_audit_inputs, check_trainer_settings, upper_bounds
from ..parallel import check_n_jobs, map_seeded
from .results import AuditBound
from .statistics import best_threshold, epsilon_from_mu, error_counts, gaussian_mu_lower_bound, rate_bounds_epsilon

__all__ = ["ObservedRun", "observed_run", "observed_trainer", "canary_update_scores", "run_statistic",
           "quiet_coordinates", "update_scales", "whitebox_audit", "WhiteBoxResult", "STATISTICS", "BOUNDS"]

STATISTICS = ("sum", "likelihood_ratio", "range", "scale_range")
BOUNDS = ("gaussian", "clopper_pearson")


@dataclass
class ObservedRun:
    """Everything a white-box auditor sees of one run.

    Attributes
    ----------
    thetas : ndarray, shape (T + 1, P)
        theta_0 .. theta_T.
    updates : ndarray, shape (T, P)
        The noisy sums of clipped gradients, :math:`(\\theta_{t-1}-\\theta_t)\\,qn/\\eta` (parameter deltas
        rescaled by the *claimed* divisor q n and learning rate).
    ledger : list or None
        What the run claims to have spent.
    model : Model
    clip_norm, noise_std, sampling_rate : float
        The claimed C, sigma = z C and q.
    """

    thetas: np.ndarray
    updates: np.ndarray
    ledger: list | None
    model: object
    clip_norm: float
    noise_std: float
    sampling_rate: float


def claimed_ledger(noise_multiplier, sampling_rate, steps, n=1):
    """The ledger a correct Poisson run with these settings reports (None without noise): the Poisson scheme's."""
    if noise_multiplier == 0:
        return None
    return Poisson(n, sampling_rate).ledger(noise_multiplier, steps)


def observe_every_theta(run, theta0):
    """Run ``run(observe)`` and return every parameter vector, theta_0 first: (T + 1, P)."""
    thetas = [theta0]
    run(lambda t, theta: thetas.append(theta))
    return np.array(thetas)


def observed_run(X, y, *, noise_multiplier, clip_norm, sampling_rate, steps, learning_rate=0.01, model=None,
                 rng=None, step=None, noise=None):
    r"""DP-SGD (:func:`dpedu.textbook.training.run_dp_sgd`, Poisson batches) with every update recorded.

    ``sampling_rate=1`` is full-batch noisy gradient descent. The auditor reads the updates off the
    parameter deltas, as an observer of the training would. ``step`` and ``noise`` are passed to the loop (a
    planted bug is a step or a noise source: :mod:`dpedu.lab.audit.bugs`); the ledger is the correct run's.

    Returns
    -------
    ObservedRun
    """
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    model = LogisticModel(X.shape[1]) if model is None else model
    if not isinstance(model, Model):
        raise TypeError(f"model must be None, LogisticModel or MLP; got {model!r}")
    plan = plan_dp_sgd(X.shape[0], noise_multiplier=noise_multiplier, clip_norm=clip_norm,
                       sampling_rate=sampling_rate, steps=check_positive_int(steps, "steps"),
                       learning_rate=learning_rate)
    rng_init, rng_steps = check_rng(rng).spawn(2)
    theta0 = model.init(rng_init)
    thetas = observe_every_theta(lambda observe: run_dp_sgd(X, y, plan, model=model, theta0=theta0, rng=rng_steps,
                                                            step=step, noise=noise, observe=observe), theta0)
    updates = (thetas[:-1] - thetas[1:]) * (plan.divisor / learning_rate)
    return ObservedRun(thetas=thetas, updates=updates, ledger=plan.ledger, model=model, clip_norm=clip_norm,
                       noise_std=noise_multiplier * clip_norm, sampling_rate=sampling_rate)


def observed_trainer(*, noise_multiplier, sampling_rate, steps, clip_norm=1.0, learning_rate=0.01, model=None):
    """``train(X, y, rng) -> ObservedRun``: :func:`observed_run` with these settings (validated now)."""
    noise_multiplier, sampling_rate, steps, clip_norm, learning_rate = check_trainer_settings(
        noise_multiplier, sampling_rate, steps, clip_norm, learning_rate)

    def train(X, y, rng):
        return observed_run(X, y, noise_multiplier=noise_multiplier, clip_norm=clip_norm, sampling_rate=sampling_rate,
                            steps=steps, learning_rate=learning_rate, model=model, rng=rng)

    name = "logistic regression" if model is None else type(model).__name__
    train.description = (f"DP-SGD ({name}), every update observed: z = {noise_multiplier:g}, q = {sampling_rate:g}, "
                         f"T = {steps}, C = {clip_norm:g}")
    return train


def dirac_coordinates(model, theta, X, y, canary):
    """Coordinates where every record of (X, y) has gradient exactly 0 and the canary's is not, at theta."""
    others = np.abs(model.per_example_gradients(theta, X, y)).max(axis=0)
    own = np.abs(model.per_example_gradients(theta, canary[0][None, :], np.array([canary[1]])))[0]
    return np.flatnonzero((others == 0) & (own > 0))


def quiet_coordinates(model, theta, X, y, canary):
    """Coordinates where neither any record of (X, y) nor the canary has a gradient at theta: noise only."""
    others = np.abs(model.per_example_gradients(theta, X, y)).max(axis=0)
    own = np.abs(model.per_example_gradients(theta, canary[0][None, :], np.array([canary[1]])))[0]
    return np.flatnonzero((others == 0) & (own == 0))


def update_scales(run, coordinates):
    r"""Per-step noise scale :math:`\lVert \tilde g_t[J]\rVert / \sqrt{|J|}` on the coordinates J (noise only).

    On coordinates no gradient reaches, a correct run releases pure noise :math:`\mathcal N(0, \sigma^2)`
    at every step, so the scale is :math:`\sigma` up to a relative error of about :math:`1/\sqrt{2|J|}`
    in both worlds. A run whose noise scale depends on the data (e.g. divided by the realised batch
    size) shows it here.
    """
    coordinates = np.asarray(coordinates, dtype=int)
    if coordinates.size == 0:
        raise ValueError("no coordinate is free of every gradient: the noise scale cannot be read off the updates")
    return np.sqrt(np.mean(run.updates[:, coordinates] ** 2, axis=1))


def canary_update_scores(run, X, y, canary, *, coordinates=None):
    r"""Per-step canary scores :math:`s_t = \langle \tilde g_t, \hat c_t\rangle` and expected shifts
    :math:`\lVert c_t\rVert`, on the canary's Dirac coordinates.

    :math:`c_t` is the canary's gradient at :math:`\theta_{t-1}` clipped to C (the white-box auditor knows
    :math:`\theta_{t-1}`), restricted to ``coordinates`` (default: :func:`dirac_coordinates` of D at
    :math:`\theta_0`); :math:`\hat c_t = c_t/\lVert c_t\rVert`.

    Returns
    -------
    scores, shifts : ndarray, shape (T,)
    """
    x_c, y_c = canary
    model = run.model
    if coordinates is None:
        coordinates = dirac_coordinates(model, run.thetas[0], X, y, canary)
    coordinates = np.asarray(coordinates, dtype=int)
    if coordinates.size == 0:
        raise ValueError("the canary has no coordinate the other records leave at 0: "
                         "give coordinates=")
    grads = np.array([model.per_example_gradients(theta, x_c[None, :], np.array([y_c]))[0]
                      for theta in run.thetas[:-1]])
    restricted = L2_clip(grads, run.clip_norm)[:, coordinates]
    shifts = np.linalg.norm(restricted, axis=1)
    directions = restricted / np.where(shifts > 0, shifts, 1.0)[:, None]
    scores = np.einsum("tp,tp->t", run.updates[:, coordinates], directions)
    return scores, shifts


def run_statistic(scores, shifts, statistic, *, noise_std, sampling_rate):
    r"""One number per run from its per-step scores.

    ``"sum"``: :math:`\sum_t s_t` (optimal for full batches). ``"likelihood_ratio"``:
    :math:`\sum_t \ln\big(1-q+q\,e^{(a_t s_t - a_t^2/2)/\sigma^2}\big)` with :math:`a_t` the shifts and the
    claimed :math:`\sigma, q` (the Neyman-Pearson statistic against the claimed mixture). ``"range"``:
    :math:`\max_t s_t - \min_t s_t` (0 when the same noise is reused and the canary is never sampled).
    ``"scale_range"``: the same range of :math:`\ln s_t` when the scores are the noise scales of
    :func:`update_scales` (about 0 for a correct run: its noise has one scale at every step).
    """
    statistic = check_choice(statistic, "statistic", STATISTICS)
    if statistic == "sum":
        return float(np.sum(scores))
    if statistic == "likelihood_ratio":
        log_ratio = (shifts * scores - shifts ** 2 / 2) / noise_std ** 2
        return float(np.sum(np.logaddexp(math.log1p(-sampling_rate) if sampling_rate < 1 else -np.inf,
                                         math.log(sampling_rate) + log_ratio)))
    if statistic == "range":
        return float(np.max(scores) - np.min(scores))
    return float(np.log(np.max(scores)) - np.log(np.min(scores)))  # "scale_range"


class _WhiteBoxTask:
    """One pair of observed runs (with, without the canary) reduced to their run statistics (picklable).

    Returns ``(statistic in, statistic out, ledger)``, the ledger only when ``keep_ledger`` (asked of the first
    pair: every pair runs the same algorithm).
    """

    def __init__(self, train, X, y, canary, statistic, coordinates):
        self.train, self.X, self.y, self.canary = train, X, y, canary
        self.statistic, self.coordinates = statistic, coordinates

    def __call__(self, keep_ledger, rng):
        rng_in, rng_out = rng.spawn(2)
        X_in, y_in = np.vstack([self.X, self.canary[0]]), np.append(self.y, self.canary[1])
        out = []
        for data, g in (((X_in, y_in), rng_in), ((self.X, self.y), rng_out)):
            run = self.train(*data, g)
            if self.statistic == "scale_range":
                coordinates = self.coordinates
                if coordinates is None:
                    coordinates = quiet_coordinates(run.model, run.thetas[0], self.X, self.y, self.canary)
                scores, shifts = update_scales(run, coordinates), None
            else:
                scores, shifts = canary_update_scores(run, self.X, self.y, self.canary, coordinates=self.coordinates)
            out.append(run_statistic(scores, shifts, self.statistic, noise_std=run.noise_std,
                                     sampling_rate=run.sampling_rate))
        return out[0], out[1], run.ledger if keep_ledger else None


@dataclass(frozen=True)
class WhiteBoxResult(AuditBound):
    """What :func:`whitebox_audit` measured: an :class:`~dpedu.lab.audit.results.AuditBound` and the statistics
    (``mu_lower`` is nan for the Clopper-Pearson bound)."""

    mu_lower: float
    statistics_in: np.ndarray
    statistics_out: np.ndarray
    statistic: str
    bound: str
    runs: int

    def __str__(self):
        how = (f"Gaussian: mu >= {self.mu_lower:.4f} (noncentral t), epsilon on the Gaussian curve"
               if self.bound == "gaussian" else "threshold test, Clopper-Pearson on the held-out half")
        lines = [self.description or "white-box audit",
                 f"{self.runs} runs with and {self.runs} without the canary; statistic '{self.statistic}'",
                 f"  {how}"]
        return "\n".join(lines + self.bound_lines(f"white-box, {self.confidence:.0%}"))


def whitebox_audit(train, X, y, canary, *, runs=1000, delta=1e-5, confidence=0.95, statistic="auto", bound="auto",
                   coordinates=None, accountants=("moments", "rdp", "pld"), rng=None, n_jobs=1, progress=None):
    r"""Audit from every observed update: a lower bound on epsilon beside the accountants' upper bounds.

    For r = 1..``runs`` (one generator per pair, :func:`dpedu.lab.parallel.map_seeded`), observe a run on
    D + canary and one on D, reduce each to a statistic (:func:`canary_update_scores`,
    :func:`run_statistic`), then

    * ``bound="gaussian"`` (statistic ``"sum"``): :func:`gaussian_mu_lower_bound` at ``confidence``, then
      :func:`epsilon_from_mu`. Valid when the run statistic is Gaussian with one variance in both worlds,
      which holds exactly for a correct run with full batches and a Dirac canary clipped to C
      (docs/math.md §20.2); a buggy run can break the model (then use the Clopper-Pearson bound).
    * ``bound="clopper_pearson"``: threshold chosen on the first half of the runs, rates of the second half
      bounded as in :func:`dpedu.lab.audit.epsilon_lower_bound`; no model assumed (docs/math.md §20.1).

    ``"auto"``: ``"sum"`` + ``"gaussian"`` for full batches, ``"likelihood_ratio"`` + ``"clopper_pearson"``
    for q < 1.

    Parameters
    ----------
    train : callable
        ``train(X, y, rng) -> ObservedRun`` (:func:`observed_trainer`, :func:`dpedu.lab.audit.bugs.buggy_trainer`).
    X, y : arrays
        D without the canary.
    canary : (x, label)
        Its gradient must have coordinates no record of D uses (:func:`dpedu.lab.audit.make_canary` on
        :func:`dpedu.lab.audit.make_audit_data`), or give them as ``coordinates``.
    runs : int
        Runs per world (>= 4).
    delta, confidence : float
    statistic : {"auto", "sum", "likelihood_ratio", "range", "scale_range"}
        ``"scale_range"`` reads the noise scale of each update off the coordinates no gradient reaches
        (:func:`update_scales`; ``coordinates`` then names those coordinates, default
        :func:`quiet_coordinates`), the others project on the canary (:func:`canary_update_scores`).
    bound : {"auto", "gaussian", "clopper_pearson"}
    coordinates : array of int, optional
        Parameter coordinates the auditor projects on (with ``"scale_range"``: reads the noise on).
    accountants : sequence of str
    rng : None, int, SeedSequence or Generator
    n_jobs : int
        joblib workers; the result does not depend on it.
    progress : None, True or callable

    Returns
    -------
    WhiteBoxResult
    """
    X, y, canary, runs, delta, confidence = check_audit_inputs(train, X, y, canary, runs, delta, confidence,
                                                                returns=" -> ObservedRun")
    if runs < 4:
        raise ValueError(f"runs must be >= 4; got {runs}")
    statistic = check_choice(statistic, "statistic", ("auto",) + STATISTICS)
    bound = check_choice(bound, "bound", ("auto",) + BOUNDS)
    n_jobs = check_n_jobs(n_jobs)
    start = time.perf_counter()
    probe = train(np.vstack([X, canary[0]]), np.append(y, canary[1]), np.random.default_rng(0))
    full = probe.sampling_rate == 1.0
    statistic = ("sum" if full else "likelihood_ratio") if statistic == "auto" else statistic
    bound = ("gaussian" if full and statistic == "sum" else "clopper_pearson") if bound == "auto" else bound
    if bound == "gaussian" and statistic != "sum":
        raise ValueError(f"bound='gaussian' needs statistic='sum' (the only Gaussian one); got statistic={statistic!r}")
    pairs = map_seeded(_WhiteBoxTask(train, X, y, canary, statistic, coordinates), runs,
                       items=[True] + [False] * (runs - 1), rng=rng, n_jobs=n_jobs, progress=progress, desc="audit",
                       unit="pairs of runs")
    s_in = np.array([p[0] for p in pairs])
    s_out = np.array([p[1] for p in pairs])
    ledger = pairs[0][2] if pairs[0][2] is not None else "non-private"
    upper, notes = upper_bounds(ledger, delta, accountants)
    if bound == "gaussian":
        mu = gaussian_mu_lower_bound(s_in, s_out, confidence=confidence)
        eps = epsilon_from_mu(mu, delta=delta)
    else:
        mu, half, alpha = math.nan, runs // 2, 1.0 - confidence
        tau = best_threshold(s_in[:half], s_out[:half], delta, alpha / 2)
        fp, fn = error_counts(s_in[half:], s_out[half:], [tau])
        eps = float(rate_bounds_epsilon(fp, runs - half, fn, runs - half, delta, alpha / 2)[0][0])
    return WhiteBoxResult(epsilon_lower=float(eps), mu_lower=float(mu), upper_bounds=upper, statistics_in=s_in,
                          statistics_out=s_out, statistic=statistic, bound=bound, delta=delta, confidence=confidence,
                          runs=runs, seconds=time.perf_counter() - start,
                          description=getattr(train, "description", ""), notes=notes)
