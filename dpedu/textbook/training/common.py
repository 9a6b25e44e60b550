"""What every training loop shares: the checked data, the result record and its diagnostics, the clip modes and
the overflow guard."""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ..clipping import L2_clip, l2_norms
from ...ground.validation import MAX_STEPS, check_features, check_labels, check_positive, check_theta

__all__ = ["TrainingResult", "TrainingData", "DPSGDDiagnostics", "NoisyGDDiagnostics", "NotAccountedError",
           "MAX_STEPS", "CLIP_MODES", "training_data", "initial_theta", "overflow_guard", "RunLog"]

#: How a loop bounds each example's gradient: clip every per-example gradient at every step, or clip every row
#: of X once (logistic regression only: its gradient norm is below the row norm).
CLIP_MODES = ("gradients", "inputs")


class TrainingData:
    """The records a run trains on, checked once: features ``X`` (n, d), labels ``y`` in {-1, +1} and the row
    norms :math:`\\lVert x_i\\rVert` (they never change, so a run computes them once). ``data[B]`` is the batch
    of the records with indices ``B`` (an index array, or ``slice(None)`` for all of them, without a copy), with
    their norms. Build it with :func:`training_data`; code inside a run trusts it."""

    __slots__ = ("X", "y", "row_norms")

    def __init__(self, X, y, row_norms):
        self.X, self.y, self.row_norms = X, y, row_norms

    def __repr__(self):
        return f"TrainingData(n={self.n}, d={self.X.shape[1]})"

    @property
    def n(self) -> int:
        """The number of records."""
        return self.X.shape[0]

    def __getitem__(self, indices):
        if isinstance(indices, slice):
            return TrainingData(self.X[indices], self.y[indices], self.row_norms[indices])
        return TrainingData(self.X.take(indices, axis=0), self.y.take(indices), self.row_norms.take(indices))


def training_data(X, y, *, clip_inputs_to=None):
    """``X`` (n, d) finite with representable row norms and ``y`` in {-1, +1}, as a :class:`TrainingData`.

    ``clip_inputs_to=C`` (``clip_mode="inputs"``) clips every row of X to norm C first: the one place a run
    clips its inputs (docs/math.md §5). A row whose L2 norm exceeds the largest float is refused, naming ``X``:
    every clipping bound and gradient computed from it would be 0, inf or NaN.
    """
    X = check_features(X, finite=False)                # shape and type; NaN and inf next, with the norms
    y = check_labels(y, X.shape[0])
    row_norms = l2_norms(X, name="X")[:, 0]             # one pass: finite norms prove finite rows, else refused
    if clip_inputs_to is not None:
        clip_inputs_to = check_positive(clip_inputs_to, "clip_inputs_to")
        X = L2_clip(X, clip_inputs_to)                 # once: every row now has norm <= C
        row_norms = l2_norms(X, name="X")[:, 0]
    return TrainingData(X, y, row_norms)


class NotAccountedError(ValueError):
    """A result whose privacy was not accounted was asked for its epsilon or delta."""


@dataclass(frozen=True)
class DPSGDDiagnostics:
    """What a DP-SGD run did, beside its parameters and privacy (:class:`TrainingResult.details`).

    Computed on the private data and **not privatised**: diagnostics, not releases (``clip_norms`` excepted:
    with adaptive clipping each :math:`C_t` is a function of the noisy counts already released).

    Attributes
    ----------
    plan : DPSGDPlan
        The run as :func:`~dpedu.textbook.training.plan_dp_sgd` fixed it (z, C, q, T, divisor, scheme, relation, ...).
    model : Model
        The model trained (``LogisticModel`` or ``MLP``).
    batch_sizes : numpy.ndarray of int, shape (T,)
        :math:`|B_t|` of every step.
    inclusions : numpy.ndarray of int, shape (n,)
        How many batches each record was in.
    loss_steps : numpy.ndarray of int
        The steps after which ``TrainingResult.losses`` were recorded.
    clip_norms : numpy.ndarray, shape (T,)
        :math:`C_t` of every step (all equal to C without adaptive clipping).
    gradient_norm_quantiles : numpy.ndarray
        Adaptive clipping only (else empty): the ``target_quantile`` of all the per-example gradient norms at
        ``loss_steps``, what :math:`C_t` tracks.
    """

    plan: object
    model: object
    batch_sizes: np.ndarray
    inclusions: np.ndarray
    loss_steps: np.ndarray
    clip_norms: np.ndarray
    gradient_norm_quantiles: np.ndarray


@dataclass(frozen=True)
class NoisyGDDiagnostics:
    """What a noisy gradient descent run did (:class:`TrainingResult.details`).

    Attributes
    ----------
    plan : NoisyGDPlan
        The run's settings (iterations, z, C, per-iteration budget, ...).
    noisy_count : float
        :math:`\\tilde n = \\max(1, n + \\mathrm{Lap}(1/\\varepsilon_{count}))`, the released divisor.
    loss_steps : numpy.ndarray of int
        The iterations after which ``TrainingResult.losses`` were recorded (a diagnostic, not privatised).
    """

    plan: object
    noisy_count: float
    loss_steps: np.ndarray


@dataclass
class TrainingResult:
    """What a training run produced and what it spent.

    Attributes
    ----------
    theta : numpy.ndarray
        The trained parameters.
    losses : numpy.ndarray
        Mean training loss at the recorded steps. A *diagnostic* computed on the private data:
        it is not privatised, so do not publish it as if it were.
    ledger : list of (event, count) or None
        The privacy events performed; ``None`` for a non-private run (its epsilon is infinite).
    sequential : tuple of (float, float) or None
        ``(epsilon, delta)`` by sequential composition where the trainer states one (noisy gradient descent,
        the book's sum; ``(inf, 0)`` for a non-private run); ``None`` when the run was **not accounted**
        (:func:`~dpedu.textbook.training.dp_sgd`, whose subsampled events have no sequential total worth quoting).
    epsilon_per_iteration, delta_per_iteration : float
        The budget of one noisy iteration (``nan`` where not applicable).
    details : DPSGDDiagnostics, NoisyGDDiagnostics, a learner's diagnostics or None
        The run's plan and what it did (typed fields).

    ``epsilon`` and ``delta`` read ``sequential``; for a run that was not accounted they raise
    :class:`NotAccountedError` naming the call that accounts it: ``dpedu.accountants.compare(result,
    delta=...)`` (every accountant side by side) or ``dpedu.accountants.account(result.ledger, "pld",
    delta=...)``.
    """

    theta: np.ndarray
    losses: np.ndarray
    ledger: list | None
    sequential: tuple | None = None
    epsilon_per_iteration: float = float("nan")
    delta_per_iteration: float = float("nan")
    details: object = None

    @property
    def private(self) -> bool:
        """Whether the run carries a privacy guarantee."""
        return self.ledger is not None

    @property
    def epsilon(self) -> float:
        """Epsilon by sequential composition (``inf`` for a non-private run); refused for a run not accounted."""
        return self._spent()[0]

    @property
    def delta(self) -> float:
        """Delta by sequential composition (0 for a non-private run); refused for a run not accounted."""
        return self._spent()[1]

    def _spent(self):
        if self.sequential is not None:
            return self.sequential
        if not self.private:
            return (math.inf, 0.0)
        raise NotAccountedError(
            "this run was not accounted: DP-SGD returns the events it performed (result.ledger), not an epsilon. "
            "Account them: dpedu.accountants.compare(result, delta=1e-5) for every accountant side by side, or "
            "dpedu.accountants.account(result.ledger, 'pld', delta=1e-5).epsilon for one")


class RunLog:
    """What a DP-SGD run records as it goes (:class:`DPSGDDiagnostics`): every batch size, how many batches each
    record was in, and the mean training loss every ``plan.loss_every`` steps and after the last (a diagnostic on
    the private data, not privatised). A step that keeps a record of its own (adaptive clipping) is asked for it."""

    def __init__(self, plan, data, model, step):
        self.plan, self.data, self.model, self.step = plan, data, model, step
        self.batch_sizes = np.empty(plan.steps, dtype=np.int64)
        self.inclusions = np.zeros(data.n, dtype=np.int64)
        self.losses, self.loss_steps = [], []

    def after(self, t, B, theta):
        """Record step ``t`` (0-based), which trained on the records ``B`` and left ``theta``."""
        self.batch_sizes[t] = B.size if isinstance(B, np.ndarray) else len(range(self.data.n)[B])
        self.inclusions[B] += 1
        if (t + 1) % self.plan.loss_every == 0 or t + 1 == self.plan.steps:
            self.losses.append(self.model.loss(theta, self.data.X, self.data.y))
            self.loss_steps.append(t + 1)
            if hasattr(self.step, "record"):
                self.step.record(theta, self.data, self.model)

    def result(self, theta, ledger):
        """The run's :class:`TrainingResult`: ``theta``, the losses, its ``ledger`` and the diagnostics."""
        plan = self.plan
        clip_norms = getattr(self.step, "clip_norms", None)
        details = DPSGDDiagnostics(
            plan=plan, model=self.model, batch_sizes=self.batch_sizes, inclusions=self.inclusions,
            loss_steps=np.array(self.loss_steps),
            clip_norms=np.array(clip_norms) if clip_norms is not None else np.full(plan.steps, plan.clip_norm),
            gradient_norm_quantiles=np.array(getattr(self.step, "quantiles", [])))
        return TrainingResult(theta=theta, losses=np.array(self.losses), ledger=ledger, details=details)


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
