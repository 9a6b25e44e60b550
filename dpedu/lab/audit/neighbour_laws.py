r"""What DP-SGD and DP-FTRL release on worst-case *literal* neighbouring datasets (docs/math.md §20.7).

One feature and three kinds of record (:data:`RECORDS`): a row of norm :data:`ROW_NORM` with label -1 (clipped
gradient exactly +C), the same row with label +1 (gradient -C) and a row of zeros (gradient 0). With the clip
norm C = 1 and the tiny :data:`LEARNING_RATE`, theta stays where the logistic gradient of a large row is clipped
to exactly C, so the clipped sum of a batch is a count. A :class:`World` is ``others`` records of one gradient
and at most one differing record; :func:`literal_worlds` builds the literal pair of a relation:

* add/remove: D has n records, D' = D plus the differing record (n + 1: the batches are drawn on n + 1 records);
* zero-out: the differing record (gradient +C) replaced by the row of zeros (n kept);
* replace-one: the differing record's +C replaced by -C (n kept).

As the other records are alike, a batch's sum depends only on how many of them it holds and whether it holds the
differing record, so the sums a run releases are a finite Gaussian mixture. :func:`batch_sum_law` derives its
components and weights from the scheme the plan holds, on that world's n records (:class:`BatchSumLaw`);
:func:`observed_batch_sums` reads the same sums off the real loop (:func:`dpedu.textbook.training.run_dp_sgd`, or
:func:`dpedu.textbook.learners.factorized_gradient_descent`) run without noise, every update observed, and
:func:`law_mismatches` says whether they follow the derived law.

>>> from dpedu.textbook.training import plan_dp_sgd
>>> first, second = literal_worlds("add_remove", 4, other_gradient=0)
>>> law = batch_sum_law(plan_dp_sgd(second.n, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.5,
...                                 steps=3).scheme, second)
>>> law.weights.tolist(), law.sums.ravel().tolist(), law.blocks
([0.5, 0.5], [0.0, 1.0], 1)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cholesky, solve_triangular
from scipy.stats import binom

from ...ground.validation import check_positive_int, check_rng
from ...ground.events import ADD_REMOVE, ZERO_OUT, check_relation
from ...textbook.learners import factorized_gradient_descent
from ...textbook.learners.factorization import prefix_sum_matrix
from ...textbook.training import plan_dp_sgd, run_dp_sgd
from ...textbook.training.sampling import BallsInBins, Cyclic, FixedSize, Poisson, TruncatedPoisson
from .statistics import clopper_pearson

__all__ = [
    "LEARNING_RATE",
    "RECORDS",
    "ROW_NORM",
    "BatchSumLaw",
    "GaussianMixture",
    "World",
    "batch_sum_law",
    "law_mismatches",
    "literal_worlds",
    "observed_batch_sums",
]

#: Norm of the rows whose gradient is clipped: K sigma(-K |theta|) >= C wherever theta goes in a run.
ROW_NORM = 100.0
#: The learning rate of the audited runs: small, so theta stays where the clipping is exact.
LEARNING_RATE = 1e-6
#: Clipped gradient (in units of C) -> the record (row, label) that has it at every step.
RECORDS = {1: (ROW_NORM, -1.0), -1: (ROW_NORM, 1.0), 0: (0.0, 1.0)}
#: At most this many mixture components per block (a law with more is refused, by name).
MAX_COMPONENTS = 4096
#: At most this many noise-free runs of the real code per call of :func:`observed_batch_sums`.
MAX_RUNS = 100_000


@dataclass(frozen=True)
class World:
    """``others`` records of clipped gradient ``other_gradient`` and, unless ``record`` is None, one more record of
    gradient ``record`` (last): each gradient in {-1, 0, +1}, in units of C."""

    others: int
    other_gradient: int
    record: int | None

    @property
    def n(self) -> int:
        """The number of records."""
        return self.others + (self.record is not None)

    def data(self):
        """``(X, y)``: one column, the others first and the differing record last."""
        rows = [RECORDS[self.other_gradient]] * self.others
        rows += [] if self.record is None else [RECORDS[self.record]]
        return np.array([[x] for x, _ in rows]), np.array([label for _, label in rows])

    def describe(self) -> str:
        """e.g. ``"7 x (-C) + (+C)"``."""
        sign = {1: "+C", -1: "-C", 0: "0"}
        text = f"{self.others} x ({sign[self.other_gradient]})"
        return text + ("" if self.record is None else f" + ({sign[self.record]})")


def literal_worlds(relation, n, *, other_gradient):
    """The literal pair ``(D, D')`` of ``relation`` with n records in D (docs/math.md §1.2): add/remove adds a
    record of gradient +C (n + 1 in D'); zero-out replaces D's last record (+C) by a row of zeros; replace-one
    replaces it by one of gradient -C."""
    relation = check_relation(relation)
    n = check_positive_int(n, "n")
    if other_gradient not in RECORDS:
        raise ValueError(f"other_gradient must be one of {sorted(RECORDS)}; got {other_gradient!r}")
    if relation == ADD_REMOVE:
        return World(n, other_gradient, None), World(n, other_gradient, 1)
    if n < 2:
        raise ValueError(f"n must be >= 2 for relation={relation!r} (the differing record and one other); got {n}")
    return World(n - 1, other_gradient, 1), World(n - 1, other_gradient, 0 if relation == ZERO_OUT else -1)


@dataclass(frozen=True)
class GaussianMixture:
    r"""``blocks`` independent copies of :math:`\sum_k w_k\,\mathcal N(m_k, I)`: weights (K,), means (K, dim)."""

    weights: np.ndarray
    means: np.ndarray
    blocks: int = 1

    def sample(self, size, rng):
        """``size`` draws, shape (size, blocks, dim)."""
        k = rng.choice(len(self.weights), size=(size, self.blocks), p=self.weights)
        return self.means[k] + rng.standard_normal((size, self.blocks, self.means.shape[1]))

    def log_density(self, y):
        r"""ln of the density at each draw of ``y`` (size, blocks, dim), less :math:`-\lVert y\rVert^2/2` and the
        normalising constant (the same for every mixture of the same shape, so differences are log-ratios)."""
        size, blocks, dim = y.shape
        offsets = np.log(self.weights) - 0.5 * np.sum(self.means ** 2, axis=1)
        exponents = (y.reshape(-1, dim) @ self.means.T + offsets).reshape(size, blocks, -1)
        top = exponents.max(axis=-1)
        exponents -= top[..., None]
        return np.sum(top + np.log(np.exp(exponents).sum(axis=-1)), axis=-1)


@dataclass(frozen=True)
class BatchSumLaw:
    """The clipped sums of one block of a run (one step, one epoch, or the whole run) in units of C, ``sums``
    (K, dim) with probabilities ``weights`` (K,); a run releases ``blocks`` independent blocks."""

    weights: np.ndarray
    sums: np.ndarray
    blocks: int = 1

    @classmethod
    def of(cls, components, blocks=1):
        """From ``{sums tuple: probability}``, components of probability 0 dropped, sorted by their sums."""
        items = sorted((key, p) for key, p in components.items() if p > 0)
        if len(items) > MAX_COMPONENTS:
            raise ValueError(f"the law has {len(items)} components per block; at most {MAX_COMPONENTS}: use a "
                             f"smaller world")
        weights = np.array([p for _, p in items])
        return cls(weights / weights.sum(), np.array([key for key, _ in items], dtype=float), blocks)

    def mixture(self, noise_std, transform=None):
        """The released outputs as a :class:`GaussianMixture` in units of the noise: the sums (through the linear
        ``transform`` first, if given: a whitened factorisation) divided by ``noise_std``."""
        means = self.sums if transform is None else self.sums @ np.asarray(transform).T
        return GaussianMixture(self.weights, means / noise_std, self.blocks)


def _add(components, key, probability):
    key = tuple(float(v) for v in np.atleast_1d(key))
    components[key] = components.get(key, 0.0) + probability


def _step_components(scheme, world):
    """One step of Poisson, fixed-size or truncated Poisson sampling: ``{(sum,): probability}``."""
    o, g, n_o, out = world.other_gradient, world.record, world.others, {}
    if isinstance(scheme, FixedSize):                    # m of the n records, uniformly without replacement
        m = scheme.batch_size
        if g is None:
            _add(out, o * m, 1.0)
        else:
            _add(out, o * (m - 1) + g, m / world.n)
            _add(out, o * m, 1.0 - m / world.n)
        return out
    q = scheme.sampling_rate
    cap = scheme.max_batch_size if isinstance(scheme, TruncatedPoisson) else math.inf
    record_cases = [(0, 1.0)] if g is None else [(0, 1.0 - q), (1, q)]
    for k in range(n_o + 1):                             # k of the others drawn, Binomial(n_o, q)
        p_k = binom.pmf(k, n_o, q)
        for drawn, p_i in record_cases:
            total = k + drawn
            if total <= cap:
                _add(out, o * k + (g if drawn else 0), p_k * p_i)
            elif drawn:                                  # cut to the cap: the record kept with prob. cap / total
                _add(out, o * (cap - 1) + g, p_k * p_i * cap / total)
                _add(out, o * cap, p_k * p_i * (1 - cap / total))
            else:
                _add(out, o * cap, p_k * p_i)
    return out


def _compositions(total, parts):
    """Every way of writing ``total`` as an ordered sum of ``parts`` non-negative integers."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first,) + rest


def _epoch_components(scheme, world):
    """One balls-in-bins epoch (b steps): every record in one of the b batches, uniformly and independently."""
    b, o, g = scheme.batches_per_epoch, world.other_gradient, world.record
    out = {}
    if o == 0:                                           # the others' bins add nothing: only the record's bin
        for j in ([None] if g is None else range(b)):
            sums = np.zeros(b)
            if j is not None:
                sums[j] += g
            _add(out, sums, 1.0 if j is None else 1.0 / b)
        return out
    if math.comb(world.others + b - 1, b - 1) * b > MAX_COMPONENTS:
        raise ValueError(f"balls-in-bins with {world.others} other records of a non-zero gradient in b={b} bins has "
                         f"more than {MAX_COMPONENTS} components per epoch: use fewer records or other_gradient=0")
    for counts in _compositions(world.others, b):
        p = math.exp(math.lgamma(world.others + 1) - sum(math.lgamma(c + 1) for c in counts)) / b ** world.others
        base = o * np.array(counts, dtype=float)
        for j in ([None] if g is None else range(b)):
            sums = base.copy()
            if j is not None:
                sums[j] += g
            _add(out, sums, p if j is None else p / b)
    return out


def _cyclic_components(scheme, world, epochs):
    """The whole run of fixed batches from one split (a permutation modulo b): the record's batch j has probability
    size_j / n, and every epoch repeats the b sums."""
    b, o, g, n = scheme.batches_per_epoch, world.other_gradient, world.record, world.n
    sizes = np.array([len(range(k, n, b)) for k in range(b)], dtype=float)
    out = {}
    for j in ([None] if g is None else range(b)):
        sums = o * sizes
        if j is not None:
            sums[j] += g - o                              # the record instead of one of the others
        _add(out, np.tile(sums, epochs), 1.0 if j is None else sizes[j] / n)
    return out


def batch_sum_law(scheme, world, *, steps=None):
    """The :class:`BatchSumLaw` of the clipped sums a run with ``scheme`` (``plan.scheme``, made for ``world.n``
    records) releases on ``world``; ``steps`` (a whole number of epochs) is needed for the schemes whose block is
    longer than a step (balls-in-bins: one block per epoch; cyclic: one block for the whole run)."""
    if scheme.n != world.n:
        raise ValueError(f"the scheme is for n={scheme.n} records but the world has {world.n}")
    if isinstance(scheme, (BallsInBins, Cyclic)):
        b = scheme.batches_per_epoch
        if steps is None or steps % b:
            raise ValueError(f"steps must be a whole number of epochs of b={b} steps for sampling={scheme.name!r}; "
                             f"got {steps!r}")
        if isinstance(scheme, Cyclic):
            return BatchSumLaw.of(_cyclic_components(scheme, world, steps // b), 1)
        return BatchSumLaw.of(_epoch_components(scheme, world), steps // b)
    if not isinstance(scheme, (Poisson, FixedSize, TruncatedPoisson)):
        raise TypeError(f"no derived law for sampling={scheme.name!r} (the shuffled scheme has no accountant)")
    return BatchSumLaw.of(_step_components(scheme, world), steps or 1)


def factorization_transform(factorization):
    r"""W with :math:`W A G` the whitened prefix sums: the updates of a run with factorised noise reveal
    :math:`AG + BZ`, whose noise has covariance :math:`\sigma^2 BB^\top = \sigma^2 LL^\top`; :math:`W = L^{-1}A`."""
    A = prefix_sum_matrix(factorization.steps)
    L = cholesky(factorization.B @ factorization.B.T, lower=True)
    return solve_triangular(L, A, lower=True)


def _prefix_sums(thetas, divisor):
    """The released noisy sums read off theta_0 .. theta_T (one feature): (theta_{t-1} - theta_t) divisor / eta."""
    return (thetas[:-1, 0] - thetas[1:, 0]) * divisor / LEARNING_RATE


def observed_batch_sums(world, *, runs, rng, sampling=None, ftrl=None, **plan_settings):
    r"""The clipped sums of ``runs`` noise-free runs of the real code on ``world``, as (runs * blocks, dim) rows.

    DP-SGD (``sampling`` and ``plan_settings`` as :func:`dpedu.textbook.training.plan_dp_sgd` takes them, noise multiplier
    0): :func:`dpedu.textbook.training.run_dp_sgd`, every update observed. DP-FTRL (``ftrl`` a dict of
    :func:`dpedu.textbook.learners.factorized_gradient_descent`'s settings): that learner with noise multiplier
    :math:`10^{-12}` (its noise then moves a sum by about :math:`10^{-12}` C), the sums recovered from the prefix
    sums. Either way theta starts at 0 with the learning rate :data:`LEARNING_RATE`.
    """
    runs = check_positive_int(runs, "runs", maximum=MAX_RUNS)
    rng = check_rng(rng)
    X, y = world.data()
    out = []
    for seed in rng.spawn(runs):
        thetas = [np.zeros(1)]
        observe = lambda t, theta, thetas=thetas: thetas.append(theta)   # every update, in order
        if ftrl is not None:
            factorized_gradient_descent(X, y, noise_multiplier=1e-12, clip_norm=1.0, learning_rate=LEARNING_RATE,
                                        theta0=np.zeros(1), rng=seed, observe=observe, **ftrl)
            # each update is g_t plus the increment of B Z: the loop's step on the noisy prefix sums
            out.append(_prefix_sums(np.array(thetas), world.n / ftrl["batches"])[None, :])
            continue
        plan = plan_dp_sgd(world.n, noise_multiplier=0.0, clip_norm=1.0, learning_rate=LEARNING_RATE,
                           sampling=sampling, **plan_settings)
        run_dp_sgd(X, y, plan, theta0=np.zeros(1), rng=seed, observe=observe)
        sums = _prefix_sums(np.array(thetas), plan.divisor)
        b = plan.batches_per_epoch
        out.append(sums.reshape(-1, b) if sampling == "balls_in_bins" else
                   sums[None, :] if sampling == "cyclic" else sums[:, None])
    return np.vstack(out)


def law_mismatches(law, observed, *, confidence=0.999):
    """Where the observed noise-free sums (rows) disagree with ``law``: a list of sentences, empty when they agree.

    Every row must be one of the law's components (to 1e-6 C), and each component's share of the rows must lie in
    its two-sided Clopper-Pearson interval (at ``confidence``, Bonferroni over the components).
    """
    observed = np.asarray(observed, dtype=float)
    distance = np.abs(observed[:, None, :] - law.sums[None, :, :]).max(axis=2)
    nearest = distance.argmin(axis=1)
    problems = []
    strays = int(np.sum(distance[np.arange(len(observed)), nearest] > 1e-6))
    if strays:
        problems.append(f"{strays} of {len(observed)} observed blocks are not components of the derived law")
    counts = np.bincount(nearest, minlength=len(law.weights))
    level = 1 - (1 - confidence) / len(law.weights)
    lower, upper = clopper_pearson(counts, len(observed), confidence=level, side="two-sided")
    for k in np.flatnonzero((law.weights < lower) | (law.weights > upper)):
        problems.append(f"component {law.sums[k].tolist()}: probability {law.weights[k]:.4g}, observed "
                        f"{counts[k]} of {len(observed)}")
    return problems
