r"""Pro-active DP: fix the noise *before* training (van Dijk, Nguyen, Nguyen, Nguyen & Nguyen).

The closed form of arXiv 2102.09030 (docs/math.md §16): DP-SGD on N records for k epochs is
:math:`(\varepsilon, \delta = 1/N)`-DP with :math:`\varepsilon \le 1/2` when

.. math:: z = \sqrt{\frac{2(\varepsilon + \ln(1/\delta))}{\varepsilon}}, \qquad
          T \ge \frac{2k^2}{\varepsilon}, \qquad \Bigl(\frac{2}{e}\Bigr)^2 k^2 - \frac12 \ge \ln N .

z depends on the budget only, not on the number of steps T, so it can be chosen first and the
schedule (T, batch size, sampling rate q = k/T) afterwards. **The formula is a guarantee only under
its conditions**: this module checks them, refuses (``strict=True``) or warns loudly
(:class:`ProactiveConditionWarning`) outside them, and prints beside every plan what the tight
accountants certify for the same run and the z that calibrating on them would have chosen.

>>> round(proactive_noise_multiplier(0.5, 1 / 60_000), 3)
6.783
>>> p = plan(epsilon=0.5, dataset_size=60_000, epochs=5, accountants=("rdp",))
>>> p.steps, p.sampling_rate, p.expected_batch_size
(100, 0.05, 3000.0)
>>> round(p.accountant_epsilons["rdp"], 3)   # the same run, accounted tightly: about half the budget
0.269

One job per module:

* :mod:`~dpedu.accountants.proactive.closed_form`: the closed form z and its inverse, the epsilon it claims for a run;
* :mod:`~dpedu.accountants.proactive.conditions`: its conditions, each checked, and the smallest admissible schedule;
* :mod:`~dpedu.accountants.proactive.planner`: :func:`plan`, the schedule chosen before training, beside the accountants.
"""

from .closed_form import (
    EPSILON_LIMIT, QZ_LIMIT, ProactiveConditionWarning, proactive_epsilon, proactive_noise_multiplier
)
from .conditions import (
    Condition, ProactiveConditions, minimum_epochs, minimum_steps, proactive_conditions, smallest_admissible_epochs
)
from .planner import DEFAULT_ACCOUNTANTS, Plan, plan

__all__ = [
    "ProactiveConditionWarning",
    "Condition",
    "ProactiveConditions",
    "Plan",
    "proactive_noise_multiplier",
    "proactive_epsilon",
    "proactive_conditions",
    "minimum_epochs",
    "smallest_admissible_epochs",
    "minimum_steps",
    "plan",
    "EPSILON_LIMIT",
    "QZ_LIMIT",
    "DEFAULT_ACCOUNTANTS",
]
