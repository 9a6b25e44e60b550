"""dpedu: differentially private machine learning, written to be read.

Hand-written logistic regression, L2 clipping, the Laplace and Gaussian mechanisms, the book's
noisy gradient descent, and privacy accountants side by side.

>>> import dpedu
>>> dpedu.L2_clip([3.0, 4.0], 1.0)
array([0.6, 0.8])
"""

from . import accountants, calibrate, datasets, mechanisms, models, proactive, training
from ._validation import PrivacyLeakWarning
from .accountants import compare, make_accountant
from .clipping import L2_clip
from .mechanisms import gaussian_mech, gaussian_mech_vec, gaussian_mechanism, laplace_mech, laplace_mechanism
from .models import logistic
from .training import TrainingResult, gradient_descent, noisy_gradient_descent

__version__ = "0.1.0"

__all__ = [
    "accountants",
    "calibrate",
    "datasets",
    "mechanisms",
    "models",
    "proactive",
    "training",
    "logistic",
    "PrivacyLeakWarning",
    "compare",
    "make_accountant",
    "L2_clip",
    "laplace_mechanism",
    "gaussian_mechanism",
    "laplace_mech",
    "gaussian_mech",
    "gaussian_mech_vec",
    "TrainingResult",
    "gradient_descent",
    "noisy_gradient_descent",
]
