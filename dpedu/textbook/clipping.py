r"""L2 clipping: the step that gives a sum of gradients a finite sensitivity.

.. math:: \mathrm{L2\_clip}(v, C) = v \cdot \min\!\left(1, \frac{C}{\lVert v\rVert_2}\right)

After clipping, :math:`\lVert \mathrm{L2\_clip}(v, C)\rVert_2 \le C`, so under add/remove
neighbours the sum :math:`\sum_i \mathrm{L2\_clip}(g_i, C)` has L2 sensitivity C
(Abadi et al. 2016 §3.1; the book's ``L2_clip(v, b)``; docs/math.md §5).

>>> import numpy as np
>>> L2_clip(np.array([3.0, 4.0]), 1.0)
array([0.6, 0.8])
>>> L2_clip(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0)   # row by row
array([[0.6, 0.8],
       [0.3, 0.4]])
"""

from __future__ import annotations

import math

import numpy as np

from ..ground.door import door, norms, positive_or_inf, vectors
from ..ground.validation import check_array

__all__ = ["L2_clip", "clip_factor", "l2_norms"]

_FLOAT_MAX = np.finfo(float).max

# The smallest normal float (~2.2e-308). A clip factor C / ||v|| below it is subnormal: it has lost digits and
# could scale a row to a norm slightly above C, so such a row is clipped to 0 instead (0 is inside the ball).
FLOAT_TINY = np.finfo(float).tiny

# A sum of squares is exact enough only for norms in [SMALLEST_SQUARABLE_NORM, LARGEST_SQUARABLE_NORM]: below
# ~1e-154 the squares fall into the subnormals (digits lost), above ~1.3e154 they overflow to inf. 1e-150 and
# 1e150 leave a margin.
SMALLEST_SQUARABLE_NORM = 1e-150
LARGEST_SQUARABLE_NORM = 1e150


def l2_norms(v, *, name="v", ndim=None):
    r"""L2 norms along the last axis (keepdims), accurate for entries near the float maximum and minimum.

    Ordinary rows get :math:`\sqrt{\sum_j v_j^2}` (one ``einsum``, no n x d temporary). A row whose sum of
    squares would overflow or underflow (norm outside [1e-150, 1e150]) is measured with ``np.hypot``, which
    never squares. Raises ``ValueError`` naming ``name`` when a norm exceeds the largest float (~1.8e308): it
    cannot be represented, and :func:`L2_clip` refuses exactly these rows too (docs/math.md §5). ``ndim``: the
    allowed numbers of dimensions of ``v`` (any when None), as in :func:`dpedu.ground.validation.check_array`.

    >>> l2_norms([[3.0, 4.0], [1e200, 1e200]])
    array([[5.00000000e+000],
           [1.41421356e+200]])
    """
    if not (isinstance(v, np.ndarray) and v.dtype == np.float64 and v.ndim >= 1
            and (ndim is None or v.ndim in np.atleast_1d(ndim))):
        v = check_array(v, name, ndim=ndim, allow_empty=True)
    # A float64 array is not checked for NaN and inf first: any such entry makes its row's norm NaN or inf,
    # so finite norms prove finite entries, and the checks run (for their message) only when one is not.
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        norms = np.sqrt(np.einsum("...i,...i->...", v, v))[..., None]
        extreme = ~((norms >= SMALLEST_SQUARABLE_NORM) & (norms <= LARGEST_SQUARABLE_NORM))
        if np.any(extreme):                            # zero rows too: their squares may have underflowed
            norms[extreme] = np.hypot.reduce(v[extreme[..., 0]], axis=-1)
    if not np.isfinite(norms).all():
        check_array(v, name, ndim=ndim, allow_empty=True)             # NaN or inf entries: refused by name
        raise ValueError(f"the L2 norm of (a row of) {name} exceeds the largest float ({_FLOAT_MAX:.3g}) and cannot "
                         f"be represented; rescale {name}")
    return norms


@door(norms=norms, clip_norm=positive_or_inf)
def clip_factor(norms, clip_norm):
    r"""The factor each vector is scaled by when clipped, :math:`\min(1, C/\lVert v\rVert)`, from its norm.

    1 for a norm at most C (a zero vector too); ``clip_norm = inf`` means no clipping (every factor 1, the
    non-private sanity setting). A factor below the smallest normal float (a norm ~1e308 times C) has lost digits,
    so it is 0 instead: 0 is inside the ball. :func:`L2_clip` and every model's clipped sum use this one factor.

    >>> clip_factor(np.array([0.0, 0.5, 4.0]), 2.0)
    array([1. , 1. , 0.5])
    """
    if math.isinf(clip_norm):
        return np.ones_like(norms)                         # no clipping
    factor = clip_norm / np.maximum(norms, clip_norm)      # = min(1, C / ||v||)
    return np.where(factor < FLOAT_TINY, 0.0, factor)      # subnormal: 0 is in the ball


@door(v=vectors, clip_norm=positive_or_inf)
def L2_clip(v, clip_norm):
    r"""Scale ``v`` so its L2 norm is at most C: v · min(1, C / ‖v‖) (docs/math.md §5).

    Parameters
    ----------
    v : array_like, shape (d,) or (n, d)
        One vector, or a matrix of per-example gradients (one per row); rows are clipped one by one.
    clip_norm : float
        The bound C (the book calls it b), > 0. ``inf`` disables clipping (non-private).

    Returns
    -------
    numpy.ndarray
        Same shape as ``v``. Directions are kept: the whole vector is scaled, never coordinates
        one at a time (that would change the direction of the gradient).

    Notes
    -----
    Two float extremes get a plain outcome (docs/math.md §5): a row whose norm exceeds the largest float (e.g.
    ``[1.7e308, 1.7e308]``) is refused, naming ``v``; a row whose factor is below the smallest normal float (a
    norm ~1e308 times C) is clipped to 0, which is inside the ball.

    >>> L2_clip([1e300, 1e300], 1.0)
    array([0.70710678, 0.70710678])
    """
    return v * clip_factor(l2_norms(v), clip_norm)   # v * min(1, C / ||v||), row by row
