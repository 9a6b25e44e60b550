r"""Grids of Rényi orders: the default grid, the check every order argument passes, the edge warning.

The RDP and moments accountants minimise over a finite grid of orders (docs/math.md §13.4). A grid that is
too narrow can only make epsilon larger, never smaller than the truth, so a best order at an end of the
grid is worth a warning (:class:`OrderGridEdgeWarning`), not an error.

>>> DEFAULT_ORDERS[:3], float(DEFAULT_ORDERS[-1])
(array([1.1, 1.2, 1.3]), 1024.0)
>>> check_orders([2, 3], integer=True)
array([2., 3.])
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from ...ground.validation import check_array, check_real_entries

__all__ = ["DEFAULT_ORDERS", "OrderGridEdgeWarning", "check_orders", "shape_like_orders", "warn_if_at_edge",
           "caller_stacklevel"]

#: Opacus's default grid {1.1, 1.2, ..., 10.9} U {12, ..., 63}, extended with larger orders (ratio
#: <= 4/3 apart, so epsilon stays within ~1 % of the continuous optimum) up to 1024. Large orders are
#: what a large noise multiplier or a tiny sampling rate needs: one Gaussian release with z = 100 at
#: delta = 1e-5 is best accounted at alpha = 320 (improved conversion; ~480 with the classic one).
DEFAULT_ORDERS = np.array(
    [1 + x / 10 for x in range(1, 100)]
    + list(range(12, 64))
    + [80, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024],
    dtype=float,
)
DEFAULT_ORDERS.flags.writeable = False


class OrderGridEdgeWarning(UserWarning):
    """The best order sits at an end of the order grid: a wider grid may give a smaller epsilon."""


def check_orders(orders, name="orders", *, integer=False, minimum=1.0, strict=True):
    """Orders as a float array (scalar or 1-D), each > ``minimum`` (>= if not strict), integers if asked.

    Parameters
    ----------
    orders : float or array_like of float
        The orders; booleans, strings and complex numbers are refused (``TypeError``).
    name : str
        The argument's name, for the error messages.
    integer : bool
        Require whole numbers (Abadi et al.'s moment orders).
    minimum : float
        Every order must exceed it (or equal it when ``strict`` is False).
    strict : bool
        Whether ``minimum`` itself is refused.

    Returns
    -------
    numpy.ndarray
        float64, 0-D or 1-D like the input.
    """
    arr = check_array(check_real_entries(orders, name), name, ndim=(0, 1))
    bad = arr <= minimum if strict else arr < minimum
    if np.any(bad):
        relation = ">" if strict else ">="
        raise ValueError(f"{name} must all be {relation} {minimum:g}; got {arr[bad].ravel()[:5].tolist()}")
    if integer and np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must be integers; got {arr[arr != np.round(arr)].ravel()[:5].tolist()}")
    return arr


def shape_like_orders(values, orders_array):
    """``values`` as a float when ``orders_array`` is 0-D, otherwise as an array of its shape."""
    values = np.asarray(values, dtype=float).reshape(orders_array.shape)
    return float(values) if values.ndim == 0 else values


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep  # .../dpedu/


def caller_stacklevel():
    """The ``stacklevel`` that makes a warning point at the first caller outside ``dpedu`` (the user's line).

    Counted from the function that calls :func:`warnings.warn` (level 1), however deep inside the package
    the warning is raised, so no module hard-codes how many frames lie between it and the user.
    """
    frame, level = sys._getframe(1), 1  # level 1: the function that calls warnings.warn
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def warn_if_at_edge(best_order, orders, parameter="orders", *, lower_limit=None):
    """Emit :class:`OrderGridEdgeWarning` when ``best_order`` is the smallest or largest of ``orders``.

    The warning points at the first caller outside dpedu (:func:`caller_stacklevel`).

    ``lower_limit`` is the smallest order the method allows at all (1 for Abadi's integer moment
    orders): at that edge the advice is to use another method, not to extend the grid.
    """
    smallest, largest = float(np.min(orders)), float(np.max(orders))
    if smallest == largest:
        return
    if best_order == largest:
        edge, advice = "largest", f"extend {parameter} with larger orders"
    elif best_order == smallest:
        edge = "smallest"
        if lower_limit is not None and smallest <= lower_limit:
            advice = "no smaller order exists here; the RDP accountant's fractional orders in (1, 2) can do better"
        else:
            advice = f"extend {parameter} with orders closer to 1"
    else:
        return
    warnings.warn(
        f"the best order {best_order:g} is the {edge} in {parameter} ({smallest:g} .. {largest:g}), so epsilon "
        f"may be smaller outside the grid: {advice}",
        OrderGridEdgeWarning,
        stacklevel=caller_stacklevel(),
    )
