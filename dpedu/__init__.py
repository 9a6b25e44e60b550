"""dpedu: differentially private machine learning, written to be read.

Hand-written logistic regression, L2 clipping, the Laplace and Gaussian mechanisms, the book's
noisy gradient descent, DP-SGD, privacy accountants side by side, and a privacy budget.
``dpedu.DPLogisticRegression`` (the scikit-learn estimator) is imported on first use, so that
``import dpedu`` does not pay for importing scikit-learn.

Where things are. The top level is the textbook: ``clipping``, ``mechanisms``, ``models``, ``training``,
``accountants`` (with ``events`` and ``gaussian``), ``calibrate``, ``proactive``, ``budget``, ``estimator``,
``learners``, ``plotting``. Behind it, ``engine/`` holds the engine room (argument checks, seeded parallel maps,
fast forms pinned to the textbook). ``course/`` is the course machinery (notebook helpers, checks, exercises, the
instructor kit); ``research/`` the research extensions (private selection and tuning, privacy statements, audits,
experiments); ``cli/`` is ``python -m dpedu``.

Layers (imports point only downward: a module imports from its own layer or a lower one, never from a
higher one, not even inside a function; no module imports another module's private ``_names``;
``tests/test_layers.py`` checks both):

1. engine (validation, door, search, parallel), datasets - argument checks and the ``@door`` that applies them
   once; the one monotone search; seeded parallel maps; reading the data
2. events, events_allocation, gaussian - what a release did; the Gaussian mechanism's closed forms
3. clipping, mechanisms, snapping - the building blocks
4. models - logistic regression and a small MLP, as their formulas
5. training, learners - gradient descent, noisy gradient descent, DP-SGD; the other private learners
6. accountants - the privacy of a ledger of events, seven ways
7. calibrate, proactive, budget, estimator, estimator_input, learner_estimators, research.selection,
   research.tuning, research.statement - choosing noise from a budget; spending it; private hyperparameter
   selection; reporting it
8. research.audit, research.experiments - empirical lower bounds; accounting tables and training sweeps
9. plotting, course - figures; the course machinery
10. cli - ``python -m dpedu``

>>> import dpedu
>>> dpedu.L2_clip([3.0, 4.0], 1.0)
array([0.6, 0.8])
"""

from . import accountants, calibrate, datasets, mechanisms, models, proactive, training
from .accountants import compare, make_accountant
from .clipping import L2_clip
from .mechanisms import gaussian_mech, gaussian_mech_vec, gaussian_mechanism, laplace_mech, laplace_mechanism
from .models import logistic
from .budget import BudgetExceededError, PrivacyBudget
from .training import TrainingResult, dp_sgd, gradient_descent, noisy_gradient_descent

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
        from .estimator import DPLogisticRegression

        return DPLogisticRegression
    raise AttributeError(f"module 'dpedu' has no attribute {name!r}")
