r"""Which accountant covers which sampling scheme under which neighbouring relation, and what it says.

One row per (sampling scheme, relation), one column per accountant: the epsilon it certifies, ``refused`` when it
has no theorem for that pair, or ``not held`` when the scheme's batches do not satisfy the relation, so that no
event can be recorded under it (docs/math.md §22). Full-batch events under replace-one are accounted as their
add/remove equivalents (sensitivity 2C: z / 2), and Gaussian and Poisson events under zero-out as themselves under
add/remove, so every accountant that covers those covers them.

Fixed batches from one split (``sampling="cyclic"``, DP-FTRL's, b = round(n / m) per epoch) record one
``GaussianEvent`` per epoch; adding a record moves the others, so they hold under zero-out and replace-one only
(docs/math.md §22.10).

Balls-in-bins batches (b = round(n / m) per epoch, one event per epoch) are accounted by the PLD accountant under
add/remove (random allocation, docs/math.md §22.9) and refused by the others; :func:`balls_in_bins_row` gives the
Monte Carlo *estimate* that checks it, with its confidence (docs/math.md §22.8), printed under the row by
:func:`format_relations_table` with ``notes=``.

>>> table = relations_table(steps=10, accountants=("rdp", "zcdp"))
>>> table[("Poisson", "add_remove")]["zcdp"], table[("fixed batches", "add_remove")]["rdp"]
('refused', 'not held')
"""

from __future__ import annotations

import warnings

from ...accountants import ACCOUNTANT_NAMES, UnsupportedEventError, make_accountant
from ...accountants.balls_in_bins import balls_in_bins_epsilon
from ...ground.validation import check_delta, check_positive_int
from ...ground.events import (
    NEIGHBOURING_RELATIONS, GaussianEvent, SampledWithoutReplacementGaussianEvent, ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent, TruncatedPoissonGaussianEvent
)
from ...ground.events_allocation import BallsInBinsGaussianEvent
from ...textbook.training.sampling import make_sampling

__all__ = ["SCHEME_SAMPLINGS", "balls_in_bins_note", "balls_in_bins_row", "format_relations_table", "relations_table",
           "scheme_events"]


#: The table's schemes by the ``sampling`` name of :func:`dpedu.textbook.training.plan_dp_sgd` (full batch: Poisson at q = 1).
SCHEME_SAMPLINGS = {"full batch": "poisson", "Poisson": "poisson", "without replacement": "fixed",
                    "shuffled": "shuffle", "truncated Poisson": "truncated_poisson", "balls-in-bins": "balls_in_bins",
                    "fixed batches": "cyclic"}
#: The schemes whose event covers a whole epoch of b steps.
PER_EPOCH = ("balls-in-bins", "fixed batches")


def _batches_per_epoch(batch_size, dataset_size):
    return max(1, round(dataset_size / batch_size))


def _sampling(scheme, batch_size, dataset_size):
    """The sampling object of the table's ``scheme`` (full batch: Poisson at rate 1)."""
    name = SCHEME_SAMPLINGS[scheme]
    rate = 1.0 if scheme == "full batch" else batch_size / dataset_size
    cap = 2 * batch_size if name == "truncated_poisson" else None
    return make_sampling(name, dataset_size, rate, cap)


def scheme_events(noise_multiplier, batch_size, dataset_size, relation, max_batch_size=None):
    """The event of one step of each sampling scheme, as a dict ``{scheme name: event}`` (balls-in-bins and fixed
    batches: of one epoch of b = round(n / m) steps)."""
    q = batch_size / dataset_size
    cap = max_batch_size if max_batch_size is not None else 2 * batch_size
    return {
        "full batch": GaussianEvent(noise_multiplier, relation=relation),
        "Poisson": SubsampledGaussianEvent(noise_multiplier, q, relation=relation),
        "without replacement": SampledWithoutReplacementGaussianEvent(noise_multiplier, batch_size, dataset_size,
                                                                      relation=relation),
        "shuffled": ShuffledBatchGaussianEvent(noise_multiplier, batch_size, dataset_size, relation=relation),
        "truncated Poisson": TruncatedPoissonGaussianEvent(noise_multiplier, q, cap, dataset_size, relation=relation),
        "balls-in-bins": BallsInBinsGaussianEvent(noise_multiplier, _batches_per_epoch(batch_size, dataset_size),
                                                  relation=relation),
        "fixed batches": GaussianEvent(noise_multiplier, relation=relation),
    }


def relations_table(*, dataset_size=60_000, batch_size=600, noise_multiplier=1.0, steps=1_000, delta=1e-5,
                    accountants=ACCOUNTANT_NAMES):
    """``{(scheme, relation): {accountant: epsilon, "refused" or "not held"}}`` for ``steps`` steps of each scheme."""
    n = check_positive_int(dataset_size, "dataset_size")
    steps = check_positive_int(steps, "steps")
    delta = check_delta(delta)
    table = {}
    for relation in NEIGHBOURING_RELATIONS:
        for scheme, event in scheme_events(noise_multiplier, batch_size, n, relation).items():
            if relation not in _sampling(scheme, batch_size, n).relations:
                table[(scheme, relation)] = {name: "not held" for name in accountants}
                continue
            row = {}
            count = -(-steps // _batches_per_epoch(batch_size, n)) if scheme in PER_EPOCH else steps
            for name in accountants:
                try:
                    accountant = make_accountant(name).compose(event, count)
                except UnsupportedEventError:
                    row[name] = "refused"
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # order-grid edge notes: the value is still a valid bound
                    row[name] = accountant.get_epsilon(delta)
            table[(scheme, relation)] = row
    return table


def format_relations_table(table, notes=None):
    """The table as aligned text, epsilons to 4 significant digits; ``notes`` ({(scheme, relation): text}) are
    printed under their rows, indented."""
    names = list(next(iter(table.values())))
    lines = [f"{'scheme':<20} {'relation':<12} " + " ".join(f"{n:>10}" for n in names)]
    for key, row in table.items():
        cells = [f"{v:>10.4g}" if isinstance(v, float) else f"{v:>10}" for v in row.values()]
        lines.append(f"{key[0]:<20} {key[1]:<12} " + " ".join(cells))
        if notes and key in notes:
            lines.extend(f"{'':<6}{line}" for line in str(notes[key]).splitlines())
    return "\n".join(lines)


def balls_in_bins_row(*, dataset_size=60_000, batch_size=600, noise_multiplier=1.0, steps=1_000, delta=1e-5,
                      n_samples, rng, confidence=0.95):
    """The Monte Carlo check of the balls-in-bins row, for the table's setting (add/remove): b = round(n / m) batches
    per epoch, ceil(T / b) epochs; a :class:`~dpedu.accountants.balls_in_bins.BallsInBinsEstimate` (a Monte Carlo
    estimate, labelled, with the proven PLD bound beside it; docs/math.md §22.8, §22.9)."""
    n, m = check_positive_int(dataset_size, "dataset_size"), check_positive_int(batch_size, "batch_size")
    steps = check_positive_int(steps, "steps")
    b = _batches_per_epoch(m, n)
    return balls_in_bins_epsilon(noise_multiplier, b, epochs=-(-steps // b), delta=delta, n_samples=n_samples,
                                 rng=rng, confidence=confidence)


def balls_in_bins_note(estimate):
    """Three lines for under the add/remove balls-in-bins row: the proven bound and the labelled estimate."""
    return (f"proven upper bound {estimate.epsilon_upper_bound:.4g} (random allocation by PLD: docs/math.md §22.9)\n"
            f"check, {estimate.label}: epsilon {estimate.epsilon:.4g} (lower confidence end "
            f"{estimate.epsilon_lower:.4g})\n"
            f"  verified on {estimate.n_samples} fresh draws: delta {estimate.delta_estimate:.3g} +- "
            f"{estimate.delta_standard_error:.2g} ({estimate.confidence:.0%} upper limit {estimate.delta_upper:.3g})")
