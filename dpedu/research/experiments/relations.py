r"""Which accountant covers which sampling scheme under which neighbouring relation, and what it says.

One row per (sampling scheme, relation), one column per accountant: the epsilon it certifies, or
``refused`` when it has no theorem for that pair (docs/math.md §22). Full-batch events under replace-one are
accounted as their add/remove equivalents (sensitivity 2C: z / 2), so every accountant covers them.

>>> table = relations_table(steps=10, accountants=("rdp", "zcdp"))
>>> table[("Poisson", "add_remove")]["zcdp"]
'refused'
"""

from __future__ import annotations

import warnings

from ...accountants import ACCOUNTANT_NAMES, UnsupportedEventError, make_accountant
from ...events import (
    NEIGHBOURING_RELATIONS,
    GaussianEvent,
    SampledWithoutReplacementGaussianEvent,
    ShuffledBatchGaussianEvent,
    SubsampledGaussianEvent,
    TruncatedPoissonGaussianEvent,
)
from ...engine.validation import check_delta, check_positive_int

__all__ = ["scheme_events", "relations_table", "format_relations_table"]


def scheme_events(noise_multiplier, batch_size, dataset_size, relation, max_batch_size=None):
    """The event of one step of each sampling scheme, as a dict ``{scheme name: event}``."""
    q = batch_size / dataset_size
    cap = max_batch_size if max_batch_size is not None else 2 * batch_size
    return {
        "full batch": GaussianEvent(noise_multiplier, relation=relation),
        "Poisson": SubsampledGaussianEvent(noise_multiplier, q, relation=relation),
        "without replacement": SampledWithoutReplacementGaussianEvent(noise_multiplier, batch_size, dataset_size,
                                                                      relation=relation),
        "shuffled": ShuffledBatchGaussianEvent(noise_multiplier, batch_size, dataset_size, relation=relation),
        "truncated Poisson": TruncatedPoissonGaussianEvent(noise_multiplier, q, cap, dataset_size, relation=relation),
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
            for name in accountants:
                try:
                    accountant = make_accountant(name).compose(event, steps)
                except UnsupportedEventError:
                    row[name] = "refused"
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # order-grid edge notes: the value is still a valid bound
                    row[name] = accountant.get_epsilon(delta)
            table[(scheme, relation)] = row
    return table


def format_relations_table(table):
    """The table as aligned text, epsilons to 4 significant digits."""
    names = list(next(iter(table.values())))
    lines = [f"{'scheme':<20} {'relation':<12} " + " ".join(f"{n:>10}" for n in names)]
    for (scheme, relation), row in table.items():
        cells = [f"{v:>10.4g}" if isinstance(v, float) else f"{v:>10}" for v in row.values()]
        lines.append(f"{scheme:<20} {relation:<12} " + " ".join(cells))
    return "\n".join(lines)
