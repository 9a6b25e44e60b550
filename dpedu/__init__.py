"""dpedu: differentially private machine learning, written to be read.

Hand-written logistic regression, L2 clipping, the Laplace and Gaussian mechanisms, the book's
noisy gradient descent, DP-SGD, privacy accountants side by side, and a privacy budget.
``dpedu.DPLogisticRegression`` (the scikit-learn estimator) is imported on first use, so that
``import dpedu`` does not pay for importing scikit-learn.

Where things are: one folder per layer, lowest first. Imports point only downward: a module imports from its
own folder or a lower one, never from a higher one, not even inside a function; no module imports another
module's private ``_names`` (``tests/test_layers.py`` checks both).

Layers:

1. ground - argument checks and the ``@door`` that applies them once; the one monotone search; events (what a
   release did, under which neighbouring relation); the Gaussian mechanism's closed forms
2. textbook - what chapters 0-5 print and run: clipping, the mechanisms, the models, gradient descent, noisy
   gradient descent and DP-SGD with their sampling schemes; the other private learners; the Adult data
3. accountants - the privacy of a ledger of events, seven ways; calibration from a budget, pro-active DP, budgets
4. lab - audits and membership attacks, accounting tables and sweeps, private selection and tuning, privacy
   statements, the scikit-learn estimators, seeded parallel maps, figures
5. course - the course kit: notebook helpers, exercise checks, listings, the instructor's tools
6. cli - ``python -m dpedu``

>>> import dpedu
>>> dpedu.L2_clip([3.0, 4.0], 1.0)
array([0.6, 0.8])
"""

from . import accountants
from .accountants import calibrate, proactive
from .ground import events, gaussian                            # dpedu.events.X, as a chapter writes it
from .textbook import clipping, datasets, mechanisms, models, snapping, training
from .accountants import compare, make_accountant
from .textbook.clipping import L2_clip
from .textbook.mechanisms import gaussian_mech, gaussian_mech_vec, gaussian_mechanism, laplace_mech, laplace_mechanism
from .textbook.models import logistic
from .accountants.budget import BudgetExceededError, PrivacyBudget
from .textbook.training import TrainingResult, dp_sgd, gradient_descent, noisy_gradient_descent

__version__ = "0.1.0"

__all__ = [
    "accountants",
    "calibrate",
    "clipping",
    "datasets",
    "events",
    "gaussian",
    "mechanisms",
    "models",
    "proactive",
    "snapping",
    "training",
    "logistic",
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
    "dp_sgd",
    "PrivacyBudget",
    "BudgetExceededError",
    "DPLogisticRegression",
]


def __getattr__(name):  # PEP 562: the estimator needs scikit-learn, so load it only when asked for
    if name == "DPLogisticRegression":
        from .lab.estimator import DPLogisticRegression

        return DPLogisticRegression
    raise AttributeError(f"module 'dpedu' has no attribute {name!r}")
