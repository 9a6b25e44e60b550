"""What every training loop shares: the result record, the data check, the clip modes and the overflow guard."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..clipping import l2_norms
from ..validation import MAX_STEPS, check_features, check_labels, check_theta

__all__ = ["TrainingResult", "MAX_STEPS", "CLIP_MODES", "check_training_data", "initial_theta", "overflow_guard"]

#: How a loop bounds each example's gradient: clip every per-example gradient at every step, or clip every row
#: of X once (logistic regression only: its gradient norm is below the row norm).
CLIP_MODES = ("gradients", "inputs")


@dataclass
class TrainingResult:
    """What a training run produced and what it spent.

    Attributes
    ----------
    theta : numpy.ndarray
        The trained parameters.
    losses : numpy.ndarray
        Mean training loss after each iteration. A *diagnostic* computed on the private data:
        it is not privatised, so do not publish it as if it were.
    ledger : list of (event, count) or None
        The privacy events performed; ``None`` for a non-private run (its epsilon is infinite).
    epsilon, delta : float
        Total privacy spent by *sequential composition* (``inf`` for a non-private run). Other
        accountants: ``dpedu.accountants.compare(result, delta)``. ``nan`` for :func:`dp_sgd`, whose
        subsampled events have no sequential total worth quoting: account its ledger instead.
    epsilon_per_iteration, delta_per_iteration : float
        The budget of one noisy iteration (``nan`` where not applicable).
    details : dict
        Parameters worth reporting (noise multiplier, noisy count, ...).
    """

    theta: np.ndarray
    losses: np.ndarray
    ledger: list | None
    epsilon: float
    delta: float
    epsilon_per_iteration: float = float("nan")
    delta_per_iteration: float = float("nan")
    details: dict = field(default_factory=dict)

    @property
    def private(self) -> bool:
        """Whether the run carries a privacy guarantee."""
        return self.ledger is not None


def check_training_data(X, y):
    """``X`` (n, d) finite with representable row norms and ``y`` in {-1, +1}; returns ``(X, y)`` as floats.

    A row whose L2 norm exceeds the largest float is refused here, naming ``X``: every clipping bound and
    gradient computed from it would be 0, inf or NaN.
    """
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    l2_norms(X, name="X")
    return X, y


def initial_theta(theta0, n_params):
    """A copy of the checked ``theta0``, or zeros when it is None."""
    if theta0 is None:
        return np.zeros(n_params)
    return check_theta(theta0, n_params, "theta0").copy()


@contextmanager
def overflow_guard():
    """Run a training loop with floating-point overflow raised as a ``ValueError`` that names ``X``.

    Finite data can still be so large that a margin ``X @ theta`` or a loss exceeds the float range; the
    parameters would then silently become inf or NaN. Raised after the budget was charged: the data was touched.
    """
    try:
        with np.errstate(over="raise", invalid="raise", under="ignore"):
            yield
    except FloatingPointError as exc:
        raise ValueError(f"training overflowed the float range ({exc}): X is too large in magnitude for these "
                         f"settings; rescale X (standardise its columns or L2_clip its rows) or use a smaller "
                         f"learning_rate") from None
