r"""Plot helpers for the course: each takes an optional matplotlib ``Axes`` and returns the ``Axes``.

* :func:`plot_accuracy_vs_epsilon` - test accuracy against the **total** epsilon of the run
  (log scale), mean over seeds with the spread as a band, the non-private accuracy as a line;
* :func:`plot_epsilon_vs_epochs` - total epsilon against epochs, one curve per accountant (Figure 2
  of Abadi et al. 2016); numbers that are not valid bounds are drawn dashed and labelled so;
* :func:`plot_figure2` - both panels of the course's Figure 2: the paper's view and every accountant;
* :func:`plot_privacy_curves` - the privacy curve delta(epsilon) of one run under every accountant (PLD with
  its bracket);
* :func:`plot_loss_curves` - training loss against epochs (or steps);
* :func:`plot_clipping_noise_tradeoff` - accuracy against the clip norm C, one line per noise multiplier;
* :func:`plot_accuracy_vs_epochs` - accuracy against epochs at one total epsilon, with the noise
  multiplier each needs on a second axis;
* :func:`plot_tradeoff`, :func:`plot_tradeoff_panels` - trade-off curves of a run under every accountant,
  its mu-GDP curve and audits on the same axes (:mod:`dpedu.lab.plotting.tradeoff`).
* :func:`plot_adaptive_clipping` - the adaptive clip norm over the steps beside the gradient-norm quantile
  it tracks (:mod:`dpedu.lab.plotting.clipping`).
* :func:`plot_last_iterate` - epsilon against the number of steps: composition, the linear-loss last iterate,
  the proven last-iterate bound and audits of the final model (:mod:`dpedu.lab.plotting.last_iterate`).
* :func:`plot_attack_roc`, :func:`plot_attack_grid` - membership attacks (LiRA, RMIA) on log-log ROC axes under
  the ceiling the run's accountant certifies (:mod:`dpedu.lab.plotting.membership`).
* :func:`plot_privacy_loss`, :func:`plot_steps_and_privacy`, :func:`plot_accuracy_comparison` - the figures of
  chapters 5 to 7: the privacy loss of one step, privacy against the number of steps at a fixed noise, several
  accuracy curves on one axes (:mod:`dpedu.lab.plotting.course`).

No ``plt.show()`` and no global style changes: the caller owns the figure. Every helper checks its arguments
(``TypeError``/``ValueError`` naming the argument) and places its legend where it covers no data: in the
emptiest inside position, measured on the drawn figure, or else below the axes.

The helpers are split by job: :mod:`dpedu.lab.plotting.accuracy`, :mod:`dpedu.lab.plotting.accounting`,
:mod:`dpedu.lab.plotting.losses`, and what they share (argument checks, colours, ticks, the legend placement
:func:`place_legend`) in :mod:`dpedu.lab.plotting.common`.
Each module's docstring opens with an example (:mod:`dpedu.lab.plotting.accuracy`: accuracy against epsilon).
"""

from __future__ import annotations

from .accounting import plot_epsilon_vs_epochs, plot_figure2, plot_privacy_curves
from .accuracy import plot_accuracy_vs_epochs, plot_accuracy_vs_epsilon, plot_clipping_noise_tradeoff
from .clipping import plot_adaptive_clipping
from .last_iterate import plot_last_iterate
from .common import ACCOUNTANT_STYLES, place_legend
from .course import plot_accuracy_comparison, plot_privacy_loss, plot_steps_and_privacy
from .losses import plot_loss_curves
from .membership import plot_attack_grid, plot_attack_roc
from .tradeoff import plot_tradeoff, plot_tradeoff_panels

__all__ = [
    "ACCOUNTANT_STYLES",
    "place_legend",
    "plot_accuracy_vs_epsilon",
    "plot_epsilon_vs_epochs",
    "plot_figure2",
    "plot_privacy_curves",
    "plot_loss_curves",
    "plot_clipping_noise_tradeoff",
    "plot_accuracy_vs_epochs",
    "plot_tradeoff",
    "plot_tradeoff_panels",
    "plot_adaptive_clipping",
    "plot_last_iterate",
    "plot_attack_roc",
    "plot_attack_grid",
    "plot_privacy_loss",
    "plot_steps_and_privacy",
    "plot_accuracy_comparison",
]
