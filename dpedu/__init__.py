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

import importlib
import importlib.abc
import importlib.util
import sys

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

#: The module paths of releases before the layer folders, and where each now lives (longest prefix first). A user's
#: ``from dpedu.training import dp_sgd`` or ``import dpedu.research.audit`` still works: the old name is an alias of
#: the same module object (``dpedu.training.sgd is dpedu.textbook.training.sgd``). dpedu's own code, chapters, tests
#: and benchmarks use the new paths only (tests/test_layers.py checks it).
OLD_PATHS = {
    "dpedu.engine.parallel": "dpedu.lab.parallel", "dpedu.engine": "dpedu.ground",
    "dpedu.events_allocation": "dpedu.ground.events_allocation",
    "dpedu.events_last_iterate": "dpedu.ground.events_last_iterate",
    "dpedu.events": "dpedu.ground.events", "dpedu.gaussian": "dpedu.ground.gaussian",
    "dpedu.clipping": "dpedu.textbook.clipping", "dpedu.mechanisms": "dpedu.textbook.mechanisms",
    "dpedu.snapping": "dpedu.textbook.snapping", "dpedu.models": "dpedu.textbook.models",
    "dpedu.training": "dpedu.textbook.training", "dpedu.datasets": "dpedu.textbook.datasets",
    "dpedu.learners": "dpedu.textbook.learners", "dpedu.calibrate": "dpedu.accountants.calibrate",
    "dpedu.proactive": "dpedu.accountants.proactive", "dpedu.budget": "dpedu.accountants.budget",
    "dpedu.research": "dpedu.lab", "dpedu.learner_estimators": "dpedu.lab.learner_estimators",
    "dpedu.estimator_input": "dpedu.lab.estimator_input", "dpedu.estimator": "dpedu.lab.estimator",
    "dpedu.plotting": "dpedu.lab.plotting",
}


_LONGEST_FIRST = sorted(OLD_PATHS, key=len, reverse=True)


def new_path(name):
    """The module path that ``name`` (a path of an earlier release) now has, or None if it is not an old path."""
    if not name.startswith("dpedu."):                  # the finder is asked about every import: answer at once
        return None
    for old in _LONGEST_FIRST:
        if name == old or name.startswith(old + "."):
            return OLD_PATHS[old] + name[len(old):]
    return None


class _OldPathFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module path as the module now at :func:`new_path` (the same object, not a copy)."""

    def find_spec(self, fullname, path=None, target=None):
        return importlib.util.spec_from_loader(fullname, self) if new_path(fullname) else None

    def create_module(self, spec):
        return importlib.import_module(new_path(spec.name))

    def exec_module(self, module):
        pass                                          # the module ran when it was imported under its own name


# First on the path: a submodule of an old package path (dpedu.training.sgd) would otherwise be found in the new
# folder by the path finder and run a second time under the old name.
if not any(isinstance(finder, _OldPathFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _OldPathFinder())

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
