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

import numpy as np

from .validation import check_array, check_positive

__all__ = ["L2_clip", "clip_factors", "l2_norms", "check_norms"]

_FLOAT_MAX = np.finfo(float).max


def check_norms(norms, name="norms"):
    """A float array of norms: real, >= 0, not NaN (``inf`` allowed: such a row is clipped to 0).

    Raises ``TypeError`` for non-real input and ``ValueError`` naming ``name`` for NaN or negative entries.

    >>> check_norms([0, 2.5])
    array([0. , 2.5])
    """
    arr = np.asarray(norms)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be an array of real numbers; got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0 (inf allowed), never NaN or negative")
    return arr


def _scaled_norms(v):
    """Norms along the last axis (keepdims), ``inf`` exactly where the true norm exceeds the float range.

    Squares overflow above ~1e154 and lose digits to subnormals below ~1e-154, so those rows are divided by
    their largest entry first (a sum of squares of order one) and multiplied back.
    """
    with np.errstate(over="ignore", under="ignore"):
        norms = _plain_norms(v)
        rescale = ~(norms >= 1e-150) | np.isinf(norms)
        if v.shape[-1] > 0 and np.any(rescale):
            scale = _row_scales(v, rescale)
            norms = np.where(rescale, scale * _plain_norms(v / scale), norms)
    return norms


def _plain_norms(v):
    """sqrt of the row sums of squares (keepdims), without an n x d temporary: a third of ``np.linalg.norm``'s time."""
    return np.sqrt(np.einsum("...i,...i->...", v, v))[..., None]


def _row_scales(v, rows):
    """max |v_ij| along the last axis for the selected rows, 1 elsewhere (and for all-zero rows)."""
    scale = np.max(np.abs(np.where(np.broadcast_to(rows, v.shape), v, 0.0)), axis=-1, keepdims=True)
    return np.where(scale > 0, scale, 1.0)


def l2_norms(v, *, name="v"):
    """L2 norms along the last axis (keepdims), accurate for entries near the float maximum and minimum.

    Raises ``ValueError`` naming ``name`` when a norm exceeds the largest float (~1.8e308): it cannot be
    represented, and ``inf`` would silently turn every later computation with it into 0, inf or NaN.

    >>> l2_norms([[3.0, 4.0], [1e200, 1e200]])
    array([[5.00000000e+000],
           [1.41421356e+200]])
    """
    v = check_array(v, name, allow_empty=True)
    norms = _scaled_norms(v)
    if np.any(np.isinf(norms)):
        raise ValueError(f"the L2 norm of (a row of) {name} exceeds the largest float ({_FLOAT_MAX:.3g}) and cannot "
                         f"be represented; rescale {name}")
    return norms


def clip_factors(norms, clip_norm):
    r"""Scale factors :math:`\min(1, C/\lVert v\rVert)` for given norms (1 where the norm is 0).

    ``clip_norm = inf`` means "no clipping" (every factor is 1) - only for non-private sanity checks.
    A factor below the smallest normal float (a norm more than ~1e308 times C) is returned as 0:
    :func:`L2_clip` rescales such rows another way.
    """
    clip_norm = check_positive(clip_norm, "clip_norm", allow_inf=True)
    norms = check_norms(norms)
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

    Notes
    -----
    A row whose norm is so large that :math:`C/\lVert v\rVert` underflows (or whose norm itself exceeds the
    float range, e.g. ``[1.7e308, 1.7e308]``) is divided by its largest entry *before* squaring and then
    scaled to norm C, so it keeps its direction instead of collapsing to 0.

    >>> L2_clip([1.7e308, 1.7e308], 1.0)
    array([0.70710678, 0.70710678])
    """
    clip_norm = check_positive(clip_norm, "clip_norm", allow_inf=True)
    v = check_array(v, "v", ndim=(1, 2), allow_empty=True)
    norms = _scaled_norms(v)
    factors = clip_factors(norms, clip_norm)
    clipped = v * factors
    lost = (factors == 0) & (norms > 0)              # the factor underflowed: scale before squaring
    if np.any(lost):
        unit = v / _row_scales(v, lost)              # largest entry 1: its norm is in [1, sqrt(d)]
        rescaled = unit * (clip_norm / np.linalg.norm(unit, axis=-1, keepdims=True))
        clipped = np.where(lost, rescaled, clipped)
    return clipped
