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

# The smallest normal float (~2.2e-308). A scale factor below it is subnormal: it has lost digits and could
# scale a row to a norm slightly above C.
FLOAT_TINY = np.finfo(float).tiny

# A sum of squares is exact enough only for norms in [SMALLEST_SQUARABLE_NORM, inf): below ~1e-154 the squares
# fall into the subnormals (digits lost), above ~1.3e154 they overflow to inf. 1e-150 leaves a margin.
SMALLEST_SQUARABLE_NORM = 1e-150


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


def _plain_norms(v):
    """sqrt of the row sums of squares (keepdims), without an n x d temporary: a third of ``np.linalg.norm``'s time."""
    return np.sqrt(np.einsum("...i,...i->...", v, v))[..., None]


def _scaled_rows(v, clip_norm=None):
    r"""Rows as ``scale * unit`` with their norms: ``(scale, unit, unit_norms)``, ``||v_i|| = scale_i ||unit_i||``.

    Ordinary rows keep ``scale = 1`` and ``unit = v``. A row whose squares would overflow or underflow (its
    norm outside [SMALLEST_SQUARABLE_NORM, inf)), or whose clip factor :math:`C/\lVert v\rVert` would be
    subnormal, is divided by the power of two just below its largest entry before squaring: dividing by a power of two
    is exact, so its ``unit`` has entries of order one and a norm that neither overflows nor underflows.
    ``scale``, ``unit_norms``: keepdims shape (..., 1).
    """
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):   # inf / inf: not rescaled
        norms = _plain_norms(v)
        rescale = ~(norms >= SMALLEST_SQUARABLE_NORM) | np.isinf(norms)
        if clip_norm is not None:
            rescale |= clip_norm / norms < FLOAT_TINY
        if v.shape[-1] == 0 or not np.any(rescale):
            return np.ones_like(norms), v, norms
        largest = np.max(np.abs(np.where(np.broadcast_to(rescale, v.shape), v, 0.0)), axis=-1, keepdims=True)
        scale = np.where(largest > 0, np.ldexp(1.0, np.frexp(largest)[1] - 1), 1.0)  # 2^e <= largest < 2^(e+1)
        unit = v / scale
        return scale, unit, np.where(rescale, _plain_norms(unit), norms)


def l2_norms(v, *, name="v"):
    """L2 norms along the last axis (keepdims), accurate for entries near the float maximum and minimum.

    Raises ``ValueError`` naming ``name`` when a norm exceeds the largest float (~1.8e308): it cannot be
    represented, and ``inf`` would silently turn every later computation with it into 0, inf or NaN.

    >>> l2_norms([[3.0, 4.0], [1e200, 1e200]])
    array([[5.00000000e+000],
           [1.41421356e+200]])
    """
    v = check_array(v, name, allow_empty=True)
    scale, _, unit_norms = _scaled_rows(v)
    with np.errstate(over="ignore"):
        norms = scale * unit_norms                       # inf exactly where the norm exceeds the float range
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
    factors[factors < FLOAT_TINY] = 0.0                # subnormal: digits lost; 0 is in the ball
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
    Each row is written as ``scale * unit`` (``scale = 1`` for every ordinary row, so the result is exactly
    :math:`v\cdot\min(1, C/\lVert v\rVert)`); then
    :math:`\mathrm{unit}\cdot\min(\mathrm{scale}, C/\lVert\mathrm{unit}\rVert)` is the same vector. A row whose
    squares would overflow or underflow, or whose factor :math:`C/\lVert v\rVert` would be subnormal (e.g.
    ``[1.7e308, 1.7e308]``, whose norm exceeds the float range), gets a power-of-two ``scale`` near its largest
    entry, so it keeps its direction instead of collapsing to 0.

    >>> L2_clip([1.7e308, 1.7e308], 1.0)
    array([0.70710678, 0.70710678])
    """
    clip_norm = check_positive(clip_norm, "clip_norm", allow_inf=True)
    v = check_array(v, "v", ndim=(1, 2), allow_empty=True)
    if np.isinf(clip_norm):
        return v.copy()                                    # C = inf: no clipping (the non-private sanity setting)
    scale, unit, unit_norms = _scaled_rows(v, clip_norm)   # v = scale * unit; scale 1 unless a norm is extreme
    with np.errstate(divide="ignore", over="ignore"):      # C / ||v|| = inf (a zero row): factor 1
        return unit * np.minimum(scale, clip_norm / unit_norms)   # = v * min(1, C / ||v||), row by row
