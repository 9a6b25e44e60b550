r"""RDP of the Gaussian on a truncated Poisson sample, under add/remove (docs/math.md §22.5).

Each of the records is drawn with probability q; when more than B are drawn, a uniformly random B of them
are kept; the kept records' sum gets noise :math:`\mathcal N(0, z^2C^2I)`. Let K be the number of *other*
records drawn (all but the differing one). K has the same law with and without the differing record, so
revealing the branch ":math:`K \ge B`" changes nothing in the comparison and only helps the adversary:

* :math:`K < B` (probability :math:`1-p`): nothing is cut, and the step is the Poisson-sampled Gaussian
  (rate q, multiplier z);
* :math:`K \ge B` (probability :math:`p = \Pr[\mathrm{Bin}(n_o, q) \ge B]`, :math:`n_o` others): the
  differing record, when kept (overall probability :math:`\bar\gamma`), takes the place of a uniformly random
  kept record, a change of norm at most 2C: the Poisson-sampled Gaussian with rate :math:`\bar\gamma` and
  multiplier :math:`z/2`, where :math:`p\bar\gamma = \frac{B}{n_o+1}\Pr[\mathrm{Bin}(n_o+1, q) \ge B+1]`.

The :math:`\alpha`-moments :math:`e^{(\alpha-1)\varepsilon(\alpha)}` of a pair whose branch is revealed are the
branch-weighted sums of the branches' moments, and each branch is bounded by the sampled Gaussian's RDP
(Mironov, Talwar & Zhang 2019) through the joint convexity of :math:`\int P^\alpha Q^{1-\alpha}`. The dataset
with the differing record has :math:`n` or :math:`n+1` records (removal or addition), so both
:math:`n_o = n-1` and :math:`n_o = n` are computed and the larger curve is kept.

>>> import numpy as np
>>> from dpedu.accountants.analysis.rdp_curves import rdp_sampled_gaussian
>>> p, gamma_bar = truncation_branches(0.01, 620, 59_999)           # a cap 20 above the mean batch of 600
>>> round(p, 4), round(gamma_bar, 5)
(0.211, 0.00977)
>>> orders = np.array([2.0, 8.0])
>>> far = rdp_truncated_poisson(1.0, 0.01, 1200, 60_000, orders)   # cutting at twice the mean: p = 2e-104
>>> bool(np.allclose(far, rdp_sampled_gaussian(0.01, 1.0, orders)))
True

A rare cut still matters at high orders, where the moments weigh rare events heavily.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binom

from ...ground.validation import check_noise_multiplier, check_positive_int, check_sampling_rate
from .orders import check_orders
from .rdp_curves import rdp_sampled_gaussian

__all__ = ["truncation_branches", "rdp_truncated_poisson"]


def truncation_branches(sampling_rate, max_batch_size, others):
    r"""``(p, gamma_bar)``: the chance that at least ``max_batch_size`` of ``others`` records are drawn, and the
    chance that the differing record is kept given that (0 when p = 0)."""
    q = check_sampling_rate(sampling_rate)
    b = check_positive_int(max_batch_size, "max_batch_size")
    p = float(binom.sf(b - 1, others, q))                      # Pr[Bin(others, q) >= B]
    if p == 0.0:
        return 0.0, 0.0
    kept = b / (others + 1) * float(binom.sf(b, others + 1, q))  # E[q B / (K + 1); K >= B]
    return p, min(q, kept / p)


def rdp_truncated_poisson(noise_multiplier, sampling_rate, max_batch_size, dataset_size, orders):
    """The RDP bound above at each of ``orders`` (> 1), as an array (docs/math.md §22.5)."""
    z = check_noise_multiplier(noise_multiplier)
    n = check_positive_int(dataset_size, "dataset_size")
    alphas = np.atleast_1d(check_orders(orders))
    poisson = np.asarray(rdp_sampled_gaussian(sampling_rate, z, alphas), dtype=float)
    worst = np.zeros(alphas.shape)
    for others in (n - 1, n):
        p, gamma_bar = truncation_branches(sampling_rate, max_batch_size, others)
        if p == 0.0:
            curve = poisson
        else:
            cut = np.asarray(rdp_sampled_gaussian(gamma_bar, z / 2.0, alphas), dtype=float) if gamma_bar > 0 else 0.0
            weights = np.log([1.0 - p, p]) if p < 1.0 else np.array([-np.inf, 0.0])
            moments = np.logaddexp(weights[0] + (alphas - 1.0) * poisson, weights[1] + (alphas - 1.0) * cut)
            curve = moments / (alphas - 1.0)
        worst = np.maximum(worst, curve)
    return worst
