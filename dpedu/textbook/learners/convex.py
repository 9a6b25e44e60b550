r"""Output and objective perturbation for L2-regularised logistic regression (docs/math.md §25.1-25.3).

Both learners train *once*, to (near) the minimum of a strongly convex objective, and pay for privacy
with one noise draw, not one per step:

* **output perturbation** (Chaudhuri, Monteleoni & Sarwate 2011) adds Gaussian noise to the minimiser
  :math:`\theta^\ast` of :math:`G(\theta) = \frac1N\sum_i \ell(\theta; x_i, y_i) + \frac\Lambda2\lVert\theta\rVert^2`,
  whose sensitivity is :math:`L/(N\Lambda)` (zero-out) or :math:`2L/(N\Lambda)` (replace-one), plus
  :math:`2\gamma/\Lambda` for a solver stopped at gradient norm :math:`\gamma`;
* **objective perturbation** (Kifer, Smith & Thakurta 2012, Thm 2) adds a random linear term
  :math:`b^\top\theta` to the objective and releases its minimiser.

**Why output perturbation claims zero-out, not add/remove.** It divides by N = ``len(X)``: its sensitivity
:math:`L/(N\Lambda)` holds when a record is replaced by one that contributes nothing and N is unchanged (zero-out,
N public); a literal addition or removal also changes the divisor and its noise scale and can move the minimiser
by up to :math:`2L/((N-1)\Lambda)` (N the larger size), so ``relation="add_remove"`` is refused (docs/math.md §1.2,
§25.1; the literal pair exceeds the zero-out claim, §20.7). Objective perturbation's objective is a sum and its
:math:`\Delta`, :math:`\zeta` do not involve N: its add/remove is a literal addition or removal (§25.3).

No refusal prints a statistic of the private data (a norm, a value of X or y): only the arguments and the bounds.

>>> import numpy as np
>>> output_perturbation_sensitivity(1000, 0.01, 1.0), output_perturbation_sensitivity(1000, 0.01, 1.0, "replace_one")
(0.1, 0.2)
>>> objective_perturbation_noise_std(1.0, 1e-5, 1.0)          # L sqrt(8 ln(2/delta) + 4 eps) / eps
10.08209210254704
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..clipping import l2_norms
from ...ground.events import ADD_REMOVE, REPLACE_ONE, EpsilonDeltaEvent, GaussianEvent, check_relation
from ...ground.gaussian import analytic_noise_multiplier
from ..models.logistic import loss as logistic_loss
from ...ground.door import count, door, nonnegative, positive
from ...ground.validation import (
    MAX_NOISE_SCALE, check_array, check_choice, check_delta, check_epsilon, check_features, check_labels,
    check_noise_multiplier, check_noise_scale, check_positive, check_positive_int, check_real_entries, check_rng
)

__all__ = [
    "ConvexResult",
    "GLM_LOSSES",
    "MAX_NEWTON_STEPS",
    "MAX_ROW_NORM",
    "minimise_regularised_logistic",
    "output_perturbation_sensitivity",
    "output_perturbation",
    "zero_out_or_replace_one",
    "objective_perturbation_noise_std",
    "objective_perturbation_regularization",
    "objective_perturbation",
]

#: The most Newton steps :func:`minimise_regularised_logistic` takes (each O(n d^2 + d^3)).
MAX_NEWTON_STEPS = 10_000
#: The largest row norm the Newton solver accepts: its Hessian sums n products of two rows, finite far beyond this.
MAX_ROW_NORM = 1e100
_MAX_OBJECTIVE = 1e250          # objective perturbation's expected zeta^2 d / Delta: far from overflow in the solver

#: Losses of a generalised linear model and, for each, whether objective perturbation's conditions hold
#: (docs/math.md §25.3): (twice differentiable, bounded gradient, curvature bound per unit of ||x||^2).
GLM_LOSSES = {
    "logistic": (True, True, 0.25),      # l'' = sigma(m) sigma(-m) <= 1/4, |l'| <= 1
    "hinge": (False, True, math.inf),    # not differentiable at margin 1
    "squared": (True, False, 1.0),       # gradient (m - 1) x unbounded in theta
}


@dataclass(frozen=True)
class ConvexResult:
    """What one perturbation run released and what it spent.

    Attributes
    ----------
    theta : numpy.ndarray
        The released parameters (noisy).
    minimiser : numpy.ndarray
        The solver's non-private point before the output noise (never release it).
    sensitivity : float
        L2 sensitivity of the solver's point (the allowance for the inexact solver included); for
        objective perturbation, the sensitivity of the residual covered by the output noise.
    noise_std : float
        Standard deviation of the output noise per coordinate.
    ledger : list of (event, count)
    relation : str
    gradient_norm : float
        Norm of the (perturbed) objective's gradient where the solver stopped.
    """

    theta: np.ndarray
    minimiser: np.ndarray
    sensitivity: float
    noise_std: float
    ledger: list
    relation: str
    gradient_norm: float


def zero_out_or_replace_one(arguments):
    """The relations output perturbation can claim (a contract of :func:`output_perturbation_sensitivity`):
    ``arguments["relation"]`` zero-out or replace-one. Add/remove is refused: the sensitivity divides by N =
    len(X), which a literal addition or removal changes, and the noise scale with it (docs/math.md §1.2, §25.1)."""
    if not isinstance(arguments, dict) or "relation" not in arguments:
        raise TypeError(f"arguments must be a dict of a call's arguments with 'relation'; got {arguments!r}")
    if check_relation(arguments["relation"]) == ADD_REMOVE:
        raise ValueError("relation='add_remove' is not covered by output perturbation: it divides by N = len(X), so "
                         "adding or removing a record also changes N and the noise scale (docs/math.md §1.2, "
                         "§25.1); use 'zero_out' (a record replaced by one that contributes nothing, N public) or "
                         "'replace_one'")


def _check_data(X, y, row_bound):
    """X, y and R checked; a row longer than R is refused without saying how long (the message carries only what
    the caller passed: a statistic of the private data, such as the largest norm, is never printed)."""
    row_bound = check_positive(row_bound, "row_bound")
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    if not np.all(l2_norms(X, name="X")[:, 0] <= row_bound * (1 + 1e-12)):     # no overflow at any scale
        raise ValueError(f"every row of X must have L2 norm at most row_bound={row_bound!r} (the Lipschitz constant "
                         f"of the logistic loss); some row is longer. Clip the rows first "
                         f"(dpedu.textbook.clipping.L2_clip(X, row_bound)): a per-record step, so it costs no privacy")
    return X, y, row_bound


def minimise_regularised_logistic(X, y, regularization, *, linear=None, scale="mean", tolerance=1e-8,
                                  max_iterations=100):
    r"""Minimise :math:`\frac1N\sum_i\ell_i(\theta) + \frac\Lambda2\lVert\theta\rVert^2 + \frac1N b^\top\theta` by
    damped Newton steps, stopping only when the gradient norm is at most ``tolerance`` (= :math:`\gamma`).

    The stopping rule is data-independent, so :math:`\lVert\hat\theta-\theta^\ast\rVert \le \gamma/\Lambda`
    (strong convexity) holds for every data set: the allowance docs/math.md §25.2 adds to the sensitivity.
    ``scale="sum"`` minimises N times that objective (the form of objective perturbation), where
    ``regularization`` is then :math:`\Delta = N\Lambda` and ``linear`` is :math:`b`.

    Returns ``(theta, gradient_norm)``. Raises ``RuntimeError`` if ``max_iterations`` steps (at most
    :data:`MAX_NEWTON_STEPS`, each with at most 34 halvings of its length) do not reach the tolerance (a point that
    misses it has no sensitivity bound, so none is returned), and ``ValueError`` if the objective overflows. Rows
    of X of norm at most :data:`MAX_ROW_NORM`; no refusal prints a value or statistic of X or y.

    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]); y = np.array([1.0, -1.0, 1.0])
    >>> theta, g = minimise_regularised_logistic(X, y, 0.1)
    >>> bool(g <= 1e-8), np.round(theta, 3)
    (True, array([ 1.484, -0.439]))
    """
    lam = check_positive(regularization, "regularization")
    check_choice(scale, "scale", ("mean", "sum"))
    tolerance = check_positive(tolerance, "tolerance")
    max_iterations = check_positive_int(max_iterations, "max_iterations", maximum=MAX_NEWTON_STEPS)
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    n, d = X.shape
    b = np.zeros(d) if linear is None else check_array(check_real_entries(linear, "linear"), "linear", ndim=1)
    if b.shape != (d,) or not np.all(np.abs(b) < MAX_NOISE_SCALE):
        raise ValueError(f"linear must be a vector of length {d} with entries below {MAX_NOISE_SCALE:g} in size; got "
                         f"shape {b.shape}")
    if not np.all(l2_norms(X, name="X")[:, 0] <= MAX_ROW_NORM):
        raise ValueError(f"every row of X must have L2 norm at most {MAX_ROW_NORM:g} for the Newton solver (its "
                         f"Hessian sums products of two rows); some row is longer: rescale X")
    factor = 1.0 if scale == "sum" else 1.0 / n            # the loss term's weight
    b = b * factor

    def objective(theta):
        return factor * n * logistic_loss(theta, X, y) + 0.5 * lam * theta @ theta + b @ theta

    theta = np.zeros(d)
    try:
        with np.errstate(over="raise", invalid="raise"):
            for _ in range(max_iterations):
                margins = y * (X @ theta)
                s = 0.5 * (1.0 - np.tanh(0.5 * margins))      # sigma(-m), no overflow at any margin
                grad = factor * (X.T @ (-y * s)) + lam * theta + b
                norm = math.hypot(*grad)                      # no overflow in squaring a large gradient
                if norm <= tolerance:
                    return theta, norm
                weighted = X * np.sqrt(factor * s * (1.0 - s))[:, None]
                hessian = weighted.T @ weighted + lam * np.eye(d)
                step = np.linalg.solve(hessian, grad)
                value, t = objective(theta), 1.0
                if grad @ step > 1e-12 * max(1.0, abs(value)):   # far from the minimum: backtrack (Armijo)
                    while objective(theta - t * step) > value - 0.25 * t * grad @ step and t > 1e-10:
                        t *= 0.5                  # at most 34 halvings (near the minimum, the full Newton step)
                theta = theta - t * step
    except FloatingPointError:
        raise ValueError(f"the objective overflows during the solve: a linear term of size s with regularization="
                         f"{lam!r} puts s^2 / regularization into it; use a larger regularization or a smaller "
                         f"linear term (objective perturbation: a larger epsilon)") from None
    raise RuntimeError(f"the solver did not reach gradient norm <= tolerance={tolerance:g} in {max_iterations} "
                       f"Newton steps: raise max_iterations or tolerance (the gradient's rounding error grows with "
                       f"the size of its terms: a large linear term or regularization needs a larger tolerance)")


@door(zero_out_or_replace_one, n=count, regularization=positive, lipschitz=positive,
      tolerance=nonnegative)
def output_perturbation_sensitivity(n, regularization, lipschitz, relation="zero_out",
                                    tolerance=0.0):
    r"""L2 sensitivity of the solver's point: g L / (N Λ) + 2γ / Λ, g = 1 (zero-out) or 2 (replace-one).

    In TeX :math:`gL/(N\Lambda) + 2\gamma/\Lambda` (docs/math.md §25.1-25.2; Chaudhuri et al. 2011, §3).
    ``n`` is N, public: under zero-out the record is replaced by one that adds nothing to the loss sum while the
    mean still divides by N. ``relation="add_remove"`` is refused: a literal removal also changes N, and with
    :math:`\lVert\theta^\ast\rVert \le L/\Lambda` the minimiser can move by up to :math:`2L/((N-1)\Lambda)` (N the
    larger size), above even replace-one's :math:`2L/(N\Lambda)`. ``tolerance`` :math:`\gamma \ge 0`.

    >>> output_perturbation_sensitivity(100, 0.1, 2.0, tolerance=1e-3)     # 2/10 + 2e-3/0.1
    0.22
    """
    g = 2.0 if relation == REPLACE_ONE else 1.0
    value = g * lipschitz / n / regularization + 2.0 * tolerance / regularization
    if not value < MAX_NOISE_SCALE:
        raise ValueError(f"the sensitivity g L / (n Lambda) + 2 gamma / Lambda overflows "
                         f"at lipschitz={lipschitz!r}, regularization={regularization!r},"
                         f" tolerance={tolerance!r}: use a larger regularization")
    return value


def _gaussian_event(noise_multiplier, relation):
    """The event of a Gaussian with std z * (sensitivity under ``relation``), normalised as dpedu.ground.events asks:
    per add/remove unit, which is half the replace-one sensitivity."""
    return GaussianEvent(2.0 * noise_multiplier if relation == REPLACE_ONE else noise_multiplier, relation=relation)


def output_perturbation(X, y, *, regularization, row_bound, noise_multiplier=None, epsilon=None, delta=None,
                        relation="zero_out", tolerance=1e-8, rng=None):
    r"""Output perturbation: :math:`\hat\theta + \mathcal N(0, (z\,\Delta)^2 I)` with
    :math:`\Delta = gR/(N\Lambda) + 2\gamma/\Lambda` (docs/math.md §25.2).

    Give ``noise_multiplier`` z, or ``epsilon`` and ``delta`` (then z is the analytic Gaussian's,
    Balle & Wang 2018). Rows of X must have norm at most ``row_bound`` R (the Lipschitz constant); a longer row is
    refused without saying how long.

    **N is public.** The sensitivity uses N = ``len(X)``, so the claim is zero-out (the default: a record replaced
    by one that contributes nothing, N unchanged) or replace-one; ``relation="add_remove"`` is refused, since a
    literal addition or removal changes N and the noise scale with it (docs/math.md §1.2, §25.1).

    >>> from dpedu.textbook.datasets import make_toy
    >>> X, y = make_toy(n=2000, d=3, rng=0); X = X / np.linalg.norm(X, axis=1).max()
    >>> r = output_perturbation(X, y, regularization=1e-3, row_bound=1.0, epsilon=1.0, delta=1e-5, rng=0)
    >>> r.ledger, round(r.sensitivity, 6)
    ([(GaussianEvent(noise_multiplier=3.730..., relation='zero_out'), 1)], 0.5)
    """
    X, y, row_bound = _check_data(X, y, row_bound)
    z = _noise_multiplier(noise_multiplier, epsilon, delta)
    rng = check_rng(rng)
    n, d = X.shape
    sensitivity = output_perturbation_sensitivity(n, regularization, row_bound, relation, tolerance)  # checks relation
    noise_std = check_noise_scale(z * sensitivity, f"std noise_multiplier * sensitivity = {z!r} * {sensitivity!r}",
                                  "a smaller noise_multiplier, a larger epsilon or a larger regularization")
    theta_hat, gradient_norm = minimise_regularised_logistic(X, y, regularization, tolerance=tolerance)
    theta = theta_hat + rng.normal(0.0, noise_std, size=d)
    return ConvexResult(theta, theta_hat, sensitivity, noise_std, [(_gaussian_event(z, relation), 1)], relation,
                        gradient_norm)


def _noise_multiplier(noise_multiplier, epsilon, delta):
    if (noise_multiplier is None) == (epsilon is None):
        raise ValueError(f"give exactly one of noise_multiplier and epsilon (with delta); got "
                         f"noise_multiplier={noise_multiplier!r}, epsilon={epsilon!r}")
    if noise_multiplier is not None:
        z = check_noise_multiplier(noise_multiplier)
        if z == 0:
            raise ValueError("noise_multiplier must be > 0 (0 releases the minimiser itself: not private)")
        return z
    if delta is None:
        raise ValueError("delta is required with epsilon (in (0, 1), well below 1/n)")
    return analytic_noise_multiplier(check_epsilon(epsilon), check_delta(delta))


def objective_perturbation_noise_std(epsilon, delta, lipschitz):
    r"""The std of each coordinate of b, ζ = L √(8 ln(2/δ) + 4ε) / ε (Kifer et al. 2012, Thm 2; docs/math.md §25.3).

    That is :math:`\zeta = L\sqrt{8\ln(2/\delta) + 4\varepsilon}/\varepsilon`.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    lipschitz = check_positive(lipschitz, "lipschitz")
    zeta = lipschitz * math.sqrt(8.0 * math.log(2.0 / delta) + 4.0 * epsilon) / epsilon
    return check_noise_scale(zeta, f"std L sqrt(8 ln(2/delta) + 4 epsilon) / epsilon at "
                                   f"lipschitz={lipschitz!r}, epsilon={epsilon!r}",
                             "a larger epsilon or a smaller lipschitz")


def objective_perturbation_regularization(epsilon, row_bound, loss="logistic"):
    r"""The smallest regulariser of the *sum* objective the theorem allows: :math:`\Delta = 2\beta/\varepsilon` with
    :math:`\beta` = (curvature bound) :math:`R^2` (logistic: :math:`R^2/4`)."""
    curvature = _check_glm_loss(loss)
    row_bound, epsilon = check_positive(row_bound, "row_bound"), check_epsilon(epsilon)
    value = 2.0 * curvature * row_bound * row_bound / epsilon        # a product: inf, not OverflowError, past the range
    if not value < MAX_NOISE_SCALE:
        raise ValueError(f"the regulariser 2 beta / epsilon = 2 c R^2 / epsilon overflows at row_bound={row_bound!r}, "
                         f"epsilon={epsilon!r}: use a smaller row_bound (rescale X) or a larger epsilon")
    return value


def _check_glm_loss(loss):
    check_choice(loss, "loss", tuple(GLM_LOSSES))
    smooth, lipschitz, curvature = GLM_LOSSES[loss]
    if not smooth:
        raise ValueError(f"loss={loss!r} fails objective perturbation's smoothness condition (the loss must be twice "
                         f"differentiable with bounded curvature; Kifer et al. 2012, Thm 2): use 'logistic'")
    if not lipschitz:
        raise ValueError(f"loss={loss!r} fails objective perturbation's Lipschitz condition (its gradient is not "
                         f"bounded over theta): use 'logistic'")
    return curvature


def objective_perturbation(X, y, *, epsilon, delta, row_bound, regularization=None, loss="logistic",
                           relation="add_remove", tolerance=1e-8, output_share=0.01, rng=None):
    r"""Objective perturbation, (epsilon, delta) form, with an output-noise allowance for the inexact solver.

    Minimises :math:`\sum_i\ell(\theta; x_i, y_i) + \frac\Delta2\lVert\theta\rVert^2 + b^\top\theta`,
    :math:`b\sim\mathcal N(0,\zeta^2 I)`, :math:`\zeta` from :func:`objective_perturbation_noise_std` at
    :math:`(\varepsilon_1, \delta_1)` (docs/math.md §25.3). Conditions, each refused by name: a GLM loss
    (rank-1 Hessian :math:`\ell''(m)\,xx^\top`) that is twice differentiable with :math:`\ell''\le c`
    (``loss``), rows of norm at most R (``row_bound``; gradient bound L = R, curvature
    :math:`\beta = cR^2`), and ``regularization`` :math:`\Delta \ge 2\beta/\varepsilon_1` (default: that
    smallest value). The solver stops at gradient norm :math:`\gamma` = ``tolerance``; as in Iyengar et
    al. (2019, approximate minima perturbation) its point gets Gaussian noise for sensitivity
    :math:`2\gamma/\Delta` at :math:`(\varepsilon_2, \delta_2)`, the ``output_share`` of the budget.

    The ledger holds both releases: ``EpsilonDeltaEvent(eps_1, delta_1)`` and the Gaussian. N is not used:
    the objective is a sum and :math:`\Delta`, :math:`\zeta`, :math:`\gamma` do not depend on it, so
    ``relation="add_remove"`` holds for a literal addition or removal of a record (docs/math.md §25.3).

    >>> from dpedu.textbook.datasets import make_toy
    >>> X, y = make_toy(n=2000, d=3, rng=0); X = X / np.linalg.norm(X, axis=1).max()
    >>> r = objective_perturbation(X, y, epsilon=1.0, delta=1e-5, row_bound=1.0, rng=0)
    >>> r.ledger[0][0]
    EpsilonDeltaEvent(epsilon=0.99, delta=9.9e-06)
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    X, y, row_bound = _check_data(X, y, row_bound)
    relation = check_relation(relation)
    share = check_positive(output_share, "output_share")
    if not share < 1:
        raise ValueError(f"output_share must be in (0, 1); got {output_share!r}")
    tolerance = check_positive(tolerance, "tolerance")
    eps1, delta1 = (1 - share) * epsilon, (1 - share) * delta
    smallest = objective_perturbation_regularization(eps1, row_bound, loss)
    reg = smallest if regularization is None else check_positive(regularization, "regularization")
    if reg < smallest * (1 - 1e-12):
        raise ValueError(f"regularization must be at least 2 beta / epsilon_1 = {smallest:.6g} for objective "
                         f"perturbation (beta = {GLM_LOSSES[loss][2]:g} R^2, epsilon_1 = {eps1:g}; Kifer et al. 2012, "
                         f"Thm 2); got {reg!r}")
    rng = check_rng(rng)
    n, d = X.shape
    zeta = objective_perturbation_noise_std(eps1, delta1, row_bound)
    scale = zeta * (zeta / reg) * d                      # b^T theta is about |b|^2 / Delta at the minimum
    if not scale < _MAX_OBJECTIVE:
        raise ValueError(f"epsilon={epsilon!r} is too small for the solver: the perturbed objective holds about "
                         f"zeta^2 d / Delta = {scale:.3g} (zeta = {zeta:.3g}, Delta = {reg:.3g}), above "
                         f"{_MAX_OBJECTIVE:g}; use a larger epsilon or regularization")
    z_out = analytic_noise_multiplier(share * epsilon, share * delta)
    sensitivity = 2.0 * tolerance / reg
    noise_std = check_noise_scale(z_out * sensitivity, f"std z * 2 gamma / Delta = {z_out!r} * {sensitivity!r}",
                                  "a smaller tolerance or a larger output_share")
    b = rng.normal(0.0, zeta, size=d)
    theta_hat, gradient_norm = minimise_regularised_logistic(X, y, reg, linear=b, scale="sum", tolerance=tolerance)
    theta = theta_hat + rng.normal(0.0, noise_std, size=d)
    ledger = [(EpsilonDeltaEvent(eps1, delta1, relation=relation), 1), (_gaussian_event(z_out, relation), 1)]
    return ConvexResult(theta, theta_hat, sensitivity, noise_std, ledger, relation, gradient_norm)
