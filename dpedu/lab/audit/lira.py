r"""LiRA, the likelihood-ratio membership attack of Carlini et al. (2022), online and offline (docs/math.md §20.5).

For one record (x, y) and a target model :math:`\theta`, the attacker observes the logit-scaled confidence
:math:`\phi = \ln(p/(1-p))`, :math:`p = \Pr_\theta[y \mid x]`. Shadow models trained with the record (IN) and
without it (OUT) show how :math:`\phi` is distributed in each world; LiRA fits a Gaussian to each (the logit
scaling makes the confidences close to Gaussian, the paper's observation) and tests:

.. math::
    \text{online:}\quad \Lambda = \ln\mathcal N(\phi;\ \mu_{\mathrm{in}}, \sigma_{\mathrm{in}}^2)
                                - \ln\mathcal N(\phi;\ \mu_{\mathrm{out}}, \sigma_{\mathrm{out}}^2), \qquad
    \text{offline:}\quad \Lambda = \ln \Phi\Big(\frac{\phi - \mu_{\mathrm{out}}}{\sigma_{\mathrm{out}}}\Big),

a Neyman-Pearson likelihood ratio when IN models are available, and the paper's one-sided test against the
OUT Gaussian (:math:`\Pr[Z \le \phi]`, :math:`Z \sim \mathcal N(\mu_{\mathrm{out}}, \sigma_{\mathrm{out}}^2)`)
when only OUT models are (they need no retraining per target record). A larger :math:`\Lambda` means "member".

With few shadow models a per-record variance is a poor estimate; the paper then uses one variance for all
records (its "fixed variance" variant). Here ``variance="global"`` pools the within-record deviations of all
records, :math:`\hat\sigma^2 = \sum_i \sum_k (\phi_{k,i} - \hat\mu_i)^2 / \sum_i (n_i - 1)`, separately for IN
and OUT; ``"auto"`` (the default) uses it below 64 shadow models, which is dpedu's rule, not the paper's.

The means are sample means and the per-record variances unbiased (divided by n - 1). The attack is a lower
bound on what a model leaks: its success proves leakage, its failure proves nothing.

>>> round(lira_score(0.9, [0.85, 0.95, 0.9], [0.5, 0.6, 0.4]), 3)    # far more likely IN than OUT
14.262
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from ...ground.door import door, open_unit
from ...ground.validation import check_array, check_choice
from .shadow import ShadowModels

__all__ = ["lira_score", "lira_scores", "VARIANCES", "AUTO_GLOBAL_BELOW", "STD_FLOOR", "model_sets"]

VARIANCES = ("auto", "per-example", "global")
AUTO_GLOBAL_BELOW = 64       # "auto": one global variance below this many shadow models
#: The smallest standard deviation a fitted Gaussian gets (equal confidences would give 0, and a division by it).
STD_FLOOR = 1e-12


def confidences(value, name):
    """The contract of the shadow confidences: a 1-D array (a number is one value) strictly inside (0, 1)."""
    p = np.atleast_1d(check_array(value, name, ndim=(0, 1), allow_empty=True))
    if np.any(p <= 0) or np.any(p >= 1):
        raise ValueError(f"{name} must be confidences strictly between 0 and 1; got {p!r}")
    return p


def two_per_world(arguments):
    """Each fitted Gaussian needs 2 values or more (an unbiased variance): OUT always, IN online; offline, no IN."""
    if not arguments["online"] and arguments["in_confidences"].size:
        raise ValueError("in_confidences must be empty offline (OUT only)")
    for name in ("out_confidences", "in_confidences") if arguments["online"] else ("out_confidences",):
        if arguments[name].size < 2:
            raise ValueError(f"{name} needs 2 values or more; got {arguments[name].size}")


@door(two_per_world, confidence=open_unit, in_confidences=confidences,
      out_confidences=confidences)
def lira_score(confidence, in_confidences, out_confidences, *, online=True):
    r"""The LiRA score of one record: from the target model's confidence ``confidence`` in the record's label and
    the confidences of shadow models trained with it (``in_confidences``) and without it (``out_confidences``).

    Every confidence :math:`p` is logit-scaled, :math:`\phi = \ln(p/(1-p))`; the Gaussians have the sample means
    and the unbiased sample variances, so each world needs at least 2 values (offline: only OUT). Online:
    :math:`\ln\mathcal N(\phi; \mu_{in}, \sigma_{in}^2) - \ln\mathcal N(\phi; \mu_{out}, \sigma_{out}^2)
    = \tfrac12(z_{out}^2 - z_{in}^2) + \ln(\sigma_{out}/\sigma_{in})`, :math:`z = (\phi - \mu)/\sigma`;
    offline (no ``in_confidences``: pass an empty list): :math:`\ln\Phi((\phi - \mu_{out})/\sigma_{out})` (module
    docstring, docs/math.md §20.5). A standard deviation is at least :data:`STD_FLOOR`.

    >>> round(math.exp(lira_score(0.55, [], [0.5, 0.6, 0.4], online=False)), 4)   # Pr[Z <= phi] under OUT
    0.6897
    """
    def logit(p):                       # phi = ln(p / (1 - p))
        return np.log(p) - np.log1p(-p)

    phi, out = logit(confidence), logit(out_confidences)
    mean_out, std_out = out.mean(), max(out.std(ddof=1), STD_FLOOR)
    if not online:                      # ln Pr[Z <= phi], Z ~ N(mean_out, std_out^2)
        return float(log_ndtr((phi - mean_out) / std_out))
    inside = logit(in_confidences)
    mean_in, std_in = inside.mean(), max(inside.std(ddof=1), STD_FLOOR)
    z_in, z_out = (phi - mean_in) / std_in, (phi - mean_out) / std_out
    return float(0.5 * (z_out**2 - z_in**2) + np.log(std_out) - np.log(std_in))


def model_sets(shadow, targets, reference):
    """``(targets, reference)`` as index arrays of models (defaults: every model is a target and a reference)."""
    k = shadow.n_models

    def indices(value, name):
        if value is None:
            return np.arange(k)
        idx = np.asarray(value)
        if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer) or np.any(idx < 0) \
                or np.any(idx >= k) or np.unique(idx).size != idx.size:
            raise ValueError(f"{name} must be distinct model indices in [0, {k}); got {value!r}")
        return idx

    return indices(targets, "targets"), indices(reference, "reference")


def _world_stats(signals, members, reference, targets):
    """Per target model and record: count, mean and sum of squared deviations of the reference models' signals
    in one world (``members`` True where the record is in that world), the target's own model left out."""
    ref = signals[reference]
    center = ref.mean(axis=0)                         # shift by a per-record constant: no cancellation in the sums
    dev = np.where(members[reference], ref - center, 0.0)
    count, total, squares = members[reference].sum(axis=0), dev.sum(axis=0), (dev**2).sum(axis=0)
    own = np.isin(targets, reference)[:, None] & members[targets]          # the target's own signal, if counted
    own_dev = np.where(own, signals[targets] - center, 0.0)
    n = count[None, :] - own
    s = total[None, :] - own_dev
    q = squares[None, :] - own_dev**2
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s / n
        ssd = np.maximum(q - s * mean, 0.0)
    return n, mean + center, ssd


def _std(n, ssd, variance, n_reference):
    """Per-record or global standard deviation (T, N); NaN where it cannot be estimated."""
    use_global = variance == "global" or (variance == "auto" and n_reference < AUTO_GLOBAL_BELOW)
    with np.errstate(invalid="ignore", divide="ignore"):
        if use_global:
            dof = np.where(n >= 1, n - 1, 0).sum(axis=1, keepdims=True)
            pooled = np.where(n >= 1, ssd, 0.0).sum(axis=1, keepdims=True) / dof
            std = np.broadcast_to(np.sqrt(pooled), n.shape)
            return np.where(n >= 1, np.maximum(std, STD_FLOOR), np.nan)
        return np.where(n >= 2, np.maximum(np.sqrt(ssd / (n - 1)), STD_FLOOR), np.nan)


def lira_scores(shadow, *, online=True, variance="auto", targets=None, reference=None):
    r"""LiRA scores of every record against every target model: shape ``(len(targets), n_records)``.

    Parameters
    ----------
    shadow : ShadowModels
        From :func:`~dpedu.lab.audit.shadow.train_shadow_models`.
    online : bool
        True: IN and OUT Gaussians (the likelihood ratio); False: the OUT Gaussian only (one-sided test).
    variance : {"auto", "per-example", "global"}
        See the module docstring.
    targets, reference : sequences of model indices, optional
        The models attacked (default: all) and the shadow models the Gaussians are fitted on (default: all). A
        target inside ``reference`` is left out of its own fit (leave one model out, as Carlini et al. do), so
        with the defaults every model is attacked by all the others.

    Returns
    -------
    ndarray
        Scores, larger for "member"; NaN for a record that no reference model (other than the target) had IN
        (online) or OUT, or, with per-example variances, fewer than 2.
    """
    if not isinstance(shadow, ShadowModels):
        raise TypeError(f"shadow must be ShadowModels (from train_shadow_models); got {type(shadow).__name__}")
    variance = check_choice(variance, "variance", VARIANCES)
    targets, reference = model_sets(shadow, targets, reference)
    n_reference = reference.size - (1 if np.isin(targets, reference).any() else 0)
    if n_reference < 1:
        raise ValueError("reference must hold at least one model besides the target")
    phi = shadow.signals[targets]
    n_out, mean_out, ssd_out = _world_stats(shadow.signals, ~shadow.memberships, reference, targets)
    std_out = _std(n_out, ssd_out, variance, n_reference)
    with np.errstate(invalid="ignore", divide="ignore"):
        if not online:
            return np.where(np.isfinite(std_out), log_ndtr((phi - mean_out) / std_out), math.nan)
        n_in, mean_in, ssd_in = _world_stats(shadow.signals, shadow.memberships, reference, targets)
        std_in = _std(n_in, ssd_in, variance, n_reference)
        z_in, z_out = (phi - mean_in) / std_in, (phi - mean_out) / std_out          # as in lira_score
        ratio = 0.5 * (z_out**2 - z_in**2) + np.log(std_out) - np.log(std_in)
    return np.where(np.isfinite(std_in) & np.isfinite(std_out), ratio, math.nan)
