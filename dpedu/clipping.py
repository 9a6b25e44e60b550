r"""L2 clipping: the step that gives a sum of gradients a finite sensitivity.

.. math:: \mathrm{L2\_clip}(v, C) = v \cdot \min\!\left(1, \frac{C}{\lVert v\rVert_2}\right)

After clipping, :math:`\lVert \mathrm{L2\_clip}(v, C)\rVert_2 \le C`, so under add/remove
neighbours the sum :math:`\sum_i \mathrm{L2\_clip}(g_i, C)` has L2 sensitivity C
(Abadi et al. 2016 §3.1; the book's ``L2_clip(v, b)``; MATH.md §5).

>>> import numpy as np
>>> L2_clip(np.array([3.0, 4.0]), 1.0)
array([0.6, 0.8])
>>> L2_clip(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0)   # row by row
array([[0.6, 0.8],
       [0.3, 0.4]])
"""

from __future__ import annotations

import numpy as np

from .validation import check_array, check_positive

__all__ = ["L2_clip", "clip_factors", "l2_norms"]


def _check_norms(norms, name="norms"):
    """A float array of norms: real, >= 0, not NaN (``inf`` allowed: such a row is clipped to 0)."""
    arr = np.asarray(norms)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be an array of real numbers; got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0 (inf allowed), never NaN or negative")
    return arr


def l2_norms(v):
    """L2 norms along the last axis (keepdims), accurate for entries near the float maximum and minimum."""
    v = check_array(v, "v", allow_empty=True)
    with np.errstate(over="ignore", under="ignore"):
        norms = np.linalg.norm(v, axis=-1, keepdims=True)
    # squares overflow above ~1e154 and lose digits to subnormals below ~1e-154: rescale those rows only
    overflowed = ~(norms >= 1e-150) | np.isinf(norms)
    if v.shape[-1] > 0 and np.any(overflowed):  # rescale by the largest entry: a sum of squares of order one
        rows = np.broadcast_to(overflowed, v.shape)
        big = np.where(rows, v, 0.0)
        scale = np.max(np.abs(big), axis=-1, keepdims=True)
        safe = np.where(scale > 0, scale, 1.0)
        norms = np.where(overflowed, scale * np.linalg.norm(big / safe, axis=-1, keepdims=True), norms)
    return norms


def clip_factors(norms, clip_norm):
    r"""Scale factors :math:`\min(1, C/\lVert v\rVert)` for given norms (1 where the norm is 0).

    ``clip_norm = inf`` means "no clipping" (every factor is 1) - only for non-private sanity checks.
    """
    clip_norm = check_positive(clip_norm, "clip_norm", allow_inf=True)
    norms = _check_norms(norms)
    # where the norm is <= C the factor is exactly 1; dividing only where it is larger avoids 0/0
    factors = np.ones_like(norms)
    over = norms > clip_norm
    factors[over] = clip_norm / norms[over]
    # a subnormal factor has lost precision and could scale a row to a norm slightly above C; 0 is in the ball
    factors[factors < np.finfo(float).tiny] = 0.0
    return factors


def L2_clip(v, clip_norm):
    r"""Scale ``v`` so its L2 norm is at most ``clip_norm``; rows of a 2-D array are clipped one by one.

    Parameters
    ----------
    v : array_like, shape (d,) or (n, d)
        One vector, or a matrix of per-example gradients (one per row).
    clip_norm : float
        The bound C (the book calls it b), > 0. ``inf`` disables clipping (non-private).

    Returns
    -------
    numpy.ndarray
        Same shape as ``v``. Directions are kept: the whole vector is scaled, never coordinates
        one at a time (that would change the direction of the gradient).
    """
    clip_norm = check_positive(clip_norm, "clip_norm", allow_inf=True)
    v = check_array(v, "v", ndim=(1, 2), allow_empty=True)
    return v * clip_factors(l2_norms(v), clip_norm)
