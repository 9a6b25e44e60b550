r"""Which accountant covers which sampling scheme under which neighbouring relation, and what it says.

One row per (sampling scheme, relation), one column per accountant: the epsilon it certifies, or
``refused`` when it has no theorem for that pair (docs/math.md §22). Full-batch events under replace-one are
accounted as their add/remove equivalents (sensitivity 2C: z / 2), so every accountant covers them.

Balls-in-bins batches (b = round(n / m) per epoch, one event per epoch) are accounted by the PLD accountant under
add/remove (random allocation, docs/math.md §22.9) and refused by the others; :func:`balls_in_bins_row` gives the
Monte Carlo *estimate* that checks it, with its confidence (docs/math.md §22.8), printed under the row by
:func:`format_relations_table` with ``notes=``.

>>> table = relations_table(steps=10, accountants=("rdp", "zcdp"))
>>> table[("Poisson", "add_remove")]["zcdp"]
'refused'
"""

from __future__ import annotations

import warnings

from ...accountants import ACCOUNTANT_NAMES, UnsupportedEventError, make_accountant
from ...accountants.balls_in_bins import balls_in_bins_epsilon
from ...events_allocation import BallsInBinsGaussianEvent
from ...events import (
    NEIGHBOURING_RELATIONS,
    GaussianEvent,
    SampledWithoutReplacementGaussianEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    TruncatedPoissonGaussianEvent,
)
from ...engine.validation import check_delta, check_positive_int

__all__ = ["scheme_events", "relations_table", "format_relations_table", "balls_in_bins_row", "balls_in_bins_note"]


def _batches_per_epoch(batch_size, dataset_size):
    return max(1, round(dataset_size / batch_size))


def scheme_events(noise_multiplier, batch_size, dataset_size, relation, max_batch_size=None):
    """The event of one step of each sampling scheme, as a dict ``{scheme name: event}`` (balls-in-bins: of one
    epoch of b = round(n / m) steps)."""
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
    }


def relations_table(*, dataset_size=60_000, batch_size=600, noise_multiplier=1.0, steps=1_000, delta=1e-5,
                    accountants=ACCOUNTANT_NAMES):
    """``{(scheme, relation): {accountant: epsilon or "refused"}}`` for ``steps`` steps of each scheme."""
    n = check_positive_int(dataset_size, "dataset_size")
    steps = check_positive_int(steps, "steps")
    delta = check_delta(delta)
    table = {}
    for relation in NEIGHBOURING_RELATIONS:
        for scheme, event in scheme_events(noise_multiplier, batch_size, n, relation).items():
            row = {}
            count = -(-steps // event.batches_per_epoch) if isinstance(event, BallsInBinsGaussianEvent) else steps
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
