r"""What every model is: :class:`Model`, and the checks its methods take at the door.

>>> import numpy as np
>>> from dpedu.textbook.models import LogisticModel
>>> LogisticModel(2).loss(np.zeros(2), np.array([[1.0, 0.0]]), np.array([1.0]))   # ln 2 at theta = 0
0.6931471805599453
"""

from __future__ import annotations

import abc

import numpy as np

from ..clipping import L2_clip
from ...ground.door import door
from ...ground.validation import check_array, check_features, check_labels, check_norms, check_theta
from ...ground.door import positive_or_inf

__all__ = ["Model", "model_arguments", "batch_arguments"]


def model_arguments(arguments):
    """A model method's ``theta``, ``X`` (and ``y``, ``row_norms``) checked against the model's shapes."""
    model = arguments["self"]
    X = arguments["X"] = check_features(arguments["X"])
    fits_model(model, X, arguments)


def batch_arguments(arguments):
    """As :func:`model_arguments`, and ``X`` may have no rows (an empty batch: the sums are zero)."""
    model = arguments["self"]
    X = arguments["X"] = check_array(arguments["X"], "X", ndim=2, allow_empty=True)
    fits_model(model, X, arguments)


def fits_model(model, X, arguments):
    """``X``'s width, ``theta``'s length, the labels and the row norms against the model."""
    if X.shape[1] != model.n_features:
        raise ValueError(f"X has {X.shape[1]} features but the model expects n_features={model.n_features}")
    arguments["theta"] = check_theta(arguments["theta"], model.n_params)
    if "y" in arguments:
        arguments["y"] = check_labels(arguments["y"], X.shape[0])
    if arguments.get("row_norms") is not None:
        norms = arguments["row_norms"] = check_norms(arguments["row_norms"], "row_norms")
        if norms.shape != (X.shape[0],):
            raise ValueError(f"row_norms must have shape ({X.shape[0]},); got {norms.shape}")


class Model(abc.ABC):
    """A model for dpedu's training loops: its shapes, a start, its scores and per-example gradients.

    Subclasses define ``n_features``, ``n_params``, :meth:`init`, :meth:`decision_function` and
    :meth:`per_example_gradients`; the loss, the predictions and the clipped sum follow (the module docstring).
    """

    n_features: int

    @property
    @abc.abstractmethod
    def n_params(self) -> int:
        """The length of ``theta``."""

    @abc.abstractmethod
    def init(self, rng=None):
        """A starting point that does not depend on the data."""

    @abc.abstractmethod
    def decision_function(self, theta, X):
        """The scores s_i, shape (n,)."""

    @abc.abstractmethod
    def per_example_gradients(self, theta, X, y):
        """The (n, n_params) matrix of per-example gradients of the logistic loss."""

    @door(model_arguments, overflow="X")
    def loss(self, theta, X, y):
        r"""The mean logistic loss :math:`\frac1n\sum_i \ln(1 + e^{-y_i s_i})` of the scores."""
        return float(np.mean(np.logaddexp(0.0, -y * self.decision_function(theta, X))))

    @door(model_arguments)
    def predict(self, theta, X):
        """Labels in {-1, +1}: the sign of the score (a score of exactly 0 predicts +1)."""
        return np.where(self.decision_function(theta, X) >= 0, 1.0, -1.0)

    @door(batch_arguments, clip_norm=positive_or_inf, overflow="X")
    def clipped_gradient_sum(self, theta, X, y, clip_norm, row_norms=None):
        r""":math:`\sum_i \mathrm{L2\_clip}(\nabla\ell(\theta; x_i, y_i), C)`: the sum whose sensitivity is C.

        ``row_norms`` (the norms :math:`\lVert x_i\rVert`, which a form without the gradient matrix may use) is
        not needed by this, the formula itself.
        """
        return L2_clip(self.per_example_gradients(theta, X, y), clip_norm).sum(axis=0)
