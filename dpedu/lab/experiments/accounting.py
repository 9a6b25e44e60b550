r"""Accounting tables: the total epsilon of a DP-SGD run by every accountant, with no data and no training.

:func:`epsilon_for_run` accounts one run with every accountant (a :class:`~dpedu.accountants.Comparison`,
the same answer :func:`dpedu.accountants.compare` gives for a ledger); :func:`epsilon_curves` does it for
a range of epochs (Figure 2 of Abadi et al. 2016); :func:`noise_for_target` asks each accountant which
noise multiplier z the same target epsilon needs. Fast and deterministic.

Every epsilon here is the **total** epsilon of a whole training run, after composition, never the
epsilon of one step. Abadi et al.'s setting (q = 0.01, z = 4, 100 epochs = 10,000 steps, delta = 1e-5):

>>> table = epsilon_for_run(noise_multiplier=4.0, sampling_rate=0.01, steps=10_000, delta=1e-5,
...                         accountants=("moments", "rdp", "strong_paper", "zcdp"))
>>> {key: round(eps, 4) for key, eps in table.items()}
{'moments': 1.2586, 'rdp': 1.0355, 'strong_paper': 9.3391, 'zcdp': nan}
>>> sorted(table.notes)                # why zCDP does not apply, and why the paper recipe is no bound
['moments', 'strong_paper', 'zcdp']
"""

from __future__ import annotations

import csv
import math
import warnings
from dataclasses import dataclass

import numpy as np

from ...accountants import calibrate
from ...accountants import Comparison, account, accountant_class
from ...ground.events import gaussian_step_event, steps_from_epochs
from ...ground.validation import (
    check_choice, check_delta, check_epsilon, check_noise_multiplier, check_positive_int, check_real_entries,
    check_sampling_rate
)

__all__ = [
    "ACCOUNTANT_KEYS",
    "ACCOUNTANT_LABELS",
    "INVALID_BOUNDS",
    "accountant_for_key",
    "check_accountant_keys",
    "check_grid",
    "steps_from_epochs",
    "epsilon_for_run",
    "EpsilonCurves",
    "epsilon_curves",
    "noise_for_target",
]

# Keys in the teaching order (loosest theorem first). "strong_paper" is the strong-composition recipe
# that reproduces Abadi et al.'s Figure 2 numbers: shown beside the valid recipe, never as a bound.
ACCOUNTANT_KEYS = ("sequential", "advanced", "strong", "strong_paper", "moments", "rdp", "zcdp", "pld")
ACCOUNTANT_LABELS = {
    "sequential": "sequential composition",
    "advanced": "advanced composition",
    "strong": "strong composition (valid recipe)",
    "strong_paper": "strong composition, paper recipe (not a valid bound)",
    "moments": "moments accountant",
    "rdp": "RDP",
    "zcdp": "zCDP",
    "pld": "PLD",
}
INVALID_BOUNDS = ("strong_paper",)
_OPTIONS = {"strong_paper": ("strong", {"recipe": "paper"})}


def accountant_for_key(key):
    """``(registry name, constructor options)`` of a key of :data:`ACCOUNTANT_KEYS`.

    >>> accountant_for_key("strong_paper")
    ('strong', {'recipe': 'paper'})
    """
    check_choice(key, "accountant", ACCOUNTANT_KEYS)
    name, options = _OPTIONS.get(key, (key, {}))
    accountant_class(name)
    return name, dict(options)


def check_accountant_keys(accountants):
    """``accountants`` as a tuple of keys of :data:`ACCOUNTANT_KEYS` (a bare string is refused)."""
    if isinstance(accountants, str):
        raise TypeError(f"accountants must be a sequence of names such as ('rdp', 'pld'); got the string {accountants!r}")
    accountants = tuple(accountants)
    for key in accountants:
        accountant_for_key(key)
    return accountants


def check_grid(values, name):
    """A grid of settings (epsilons, epochs, clip norms, ...) as a non-empty 1-D float array, each finite and > 0.

    Raises
    ------
    TypeError
        Naming ``name`` when an entry is a boolean, a string or a complex number (never converted).
    ValueError
        Naming ``name`` when the grid is empty, not 1-D, or has an entry that is not finite and > 0.

    Examples
    --------
    >>> check_grid([1, 2.5], "epsilons")
    array([1. , 2.5])
    """
    check_real_entries(values, name)
    try:
        grid = np.atleast_1d(np.asarray(values, dtype=float))
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a 1-D array of real numbers; got {values!r}") from None
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError(f"{name} must be a non-empty 1-D array of positive finite numbers; got {values!r}")
    return grid


def _account_run(key, event, steps, delta):
    """:func:`dpedu.accountants.account` of ``steps`` repetitions of ``event`` on the accountant of ``key``."""
    name, options = accountant_for_key(key)
    return account([(event, steps)], name, delta=delta, accountant_options=options)


def epsilon_for_run(*, noise_multiplier, sampling_rate, steps, delta, accountants=ACCOUNTANT_KEYS):
    r"""Total epsilon of ``steps`` DP-SGD steps, by every accountant in ``accountants``.

    Parameters
    ----------
    noise_multiplier : float
        z > 0 (noise std over the clip norm).
    sampling_rate : float
        Poisson rate q in (0, 1]; q = 1 means full-batch steps (``GaussianEvent``), the only case
        where zCDP applies.
    steps : int
        T >= 1.
    delta : float
        Total delta.
    accountants : sequence of str
        Keys of :data:`ACCOUNTANT_KEYS`; ``"strong_paper"`` is Abadi et al.'s recipe (not a bound).

    Returns
    -------
    Comparison
        ``{key: epsilon}`` (nan where the accountant does not apply), with ``notes`` ``{key: note}`` (why
        nan, or a caveat such as "not a valid bound") - the same type :func:`dpedu.accountants.compare`
        returns for a ledger.
    """
    z = check_noise_multiplier(noise_multiplier)
    event = gaussian_step_event(z, check_sampling_rate(sampling_rate))
    steps = check_positive_int(steps, "steps")
    delta = check_delta(delta)
    keys = check_accountant_keys(accountants)
    return Comparison({key: _account_run(key, event, steps, delta) for key in keys}, delta)


@dataclass
class EpsilonCurves:
    """Total epsilon against epochs, one curve per accountant (Figure 2 of Abadi et al. 2016).

    Attributes
    ----------
    epochs, steps : numpy.ndarray
        The x values; ``steps = round(epochs / q)``.
    epsilons : dict
        ``{key: array of epsilons}``, nan where an accountant does not apply.
    notes : dict
        ``{key: why it does not apply / its caveat}`` (the first note of each accountant).
    invalid : tuple
        Keys whose numbers are **not** valid bounds (the paper recipe), to be drawn as such.
    """

    epochs: np.ndarray
    steps: np.ndarray
    epsilons: dict
    notes: dict
    noise_multiplier: float
    sampling_rate: float
    delta: float
    invalid: tuple = INVALID_BOUNDS

    def labels(self):
        """``{key: label for a legend}``."""
        return {key: ACCOUNTANT_LABELS[key] for key in self.epsilons}

    def to_csv(self, path):
        """One row per epoch value: epochs, steps, then one column per accountant."""
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["epochs", "steps", *self.epsilons])
            for i, (e, t) in enumerate(zip(self.epochs, self.steps)):
                writer.writerow([f"{e:g}", int(t), *(f"{v[i]:.6g}" for v in self.epsilons.values())])


def epsilon_curves(*, noise_multiplier, sampling_rate, delta, epochs, accountants=ACCOUNTANT_KEYS, progress=None):
    r"""Total epsilon after each number of epochs in ``epochs``, for every accountant.

    Parameters
    ----------
    noise_multiplier, sampling_rate, delta : float
        z, q and the total delta (Abadi et al.'s Figure 2: 4, 0.01, 1e-5).
    epochs : array_like of float
        Epoch counts (> 0); each becomes ``round(epochs / q)`` steps (:func:`dpedu.ground.events.steps_from_epochs`).
    accountants : sequence of str
        Keys of :data:`ACCOUNTANT_KEYS`. Accountants that apply to none of the points (zCDP with q < 1)
        are dropped from ``epsilons`` and keep their reason in ``notes``.
    progress : callable, optional
        Called with a short message before each accountant (the PLD curve takes a few seconds).

    Returns
    -------
    EpsilonCurves

    Examples
    --------
    >>> c = epsilon_curves(noise_multiplier=4.0, sampling_rate=0.01, delta=1e-5, epochs=[100, 400],
    ...                    accountants=("moments", "strong_paper", "zcdp"))
    >>> {k: np.round(v, 2).tolist() for k, v in c.epsilons.items()}   # the paper: 1.26, 2.55 / 9.34, 24.22
    {'moments': [1.26, 2.58], 'strong_paper': [9.34, 24.21]}
    """
    z = check_noise_multiplier(noise_multiplier)
    q = check_sampling_rate(sampling_rate)
    delta = check_delta(delta)
    epochs = check_grid(epochs, "epochs")
    steps = np.array([steps_from_epochs(e, q) for e in epochs])
    event = gaussian_step_event(z, q)
    curves, notes = {}, {}
    for key in check_accountant_keys(accountants):
        if progress is not None:
            progress(f"accounting {ACCOUNTANT_LABELS[key]} at {len(steps)} points ...")
        results = [_account_run(key, event, int(t), delta) for t in steps]
        values = np.array([result.epsilon for result in results])
        first_note = next((result.note for result in results if result.notes), None)
        if first_note is not None:
            notes[key] = first_note
        if not np.all(np.isnan(values)):
            curves[key] = values
    return EpsilonCurves(epochs=epochs, steps=steps, epsilons=curves, notes=notes, noise_multiplier=z,
                         sampling_rate=q, delta=delta)


def noise_for_target(*, target_epsilon, target_delta, sampling_rate, steps, accountants=ACCOUNTANT_KEYS, rtol=1e-3,
                     progress=None):
    r"""The noise multiplier each accountant needs for the same run to meet the same target.

    For each key, :func:`dpedu.accountants.calibrate.noise_multiplier` (bisection on a fresh accountant; the
    returned z never overshoots the target).

    Returns
    -------
    (dict, dict)
        ``{key: z}`` (nan where the accountant cannot calibrate this run) and ``{key: note}``.

    Examples
    --------
    >>> z, notes = noise_for_target(target_epsilon=1.26, target_delta=1e-5, sampling_rate=0.01, steps=10_000,
    ...                             accountants=("moments", "rdp"))
    >>> {k: round(v, 2) for k, v in z.items()}          # Abadi et al. used z = 4 for epsilon 1.26
    {'moments': 4.0, 'rdp': 3.37}
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    target_delta = check_delta(target_delta, "target_delta")
    q = check_sampling_rate(sampling_rate)
    steps = check_positive_int(steps, "steps")
    values, notes = {}, {}
    for key in check_accountant_keys(accountants):
        if progress is not None:
            progress(f"calibrating on {ACCOUNTANT_LABELS[key]} ...")
        name, options = accountant_for_key(key)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                values[key] = calibrate.noise_multiplier(target_epsilon=target_epsilon, target_delta=target_delta,
                                                         sampling_rate=q, steps=steps, accountant=name, rtol=rtol,
                                                         accountant_options=options or None)
            except ValueError as exc:  # UnsupportedEventError is a ValueError too
                values[key] = math.nan
                notes[key] = str(exc)
        for w in caught:
            if issubclass(w.category, RuntimeWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            elif key not in notes:
                notes[key] = str(w.message)
        if key in INVALID_BOUNDS and not math.isnan(values[key]):
            notes[key] = "not a valid bound: this z does NOT guarantee the target"
    return values, notes
