r"""Membership inference on one trained model: the loss-threshold attack (Yeom et al. 2018).

It measures *average-case* leakage of a real dataset; the records of one model are not independent
trials of the DP game, so its rates give no confidence bound on epsilon (use :mod:`dpedu.lab.audit.canary`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ground.validation import check_features, check_labels, check_nonnegative, check_theta
from .statistics import epsilon_from_rate_arrays

__all__ = ["MembershipAttackResult", "loss_threshold_attack"]


@dataclass
class MembershipAttackResult:
    """Outcome of :func:`loss_threshold_attack`.

    Attributes
    ----------
    tpr, fpr : float
        Members called members; non-members called members.
    advantage : float
        ``tpr - fpr`` (Yeom et al. 2018, Def. 4): 0 for guessing.
    auc : float
        Probability that a random member has a lower loss than a random non-member (ties count 1/2).
    threshold : float
    member_losses, nonmember_losses : ndarray
    """

    tpr: float
    fpr: float
    advantage: float
    auc: float
    threshold: float
    member_losses: np.ndarray
    nonmember_losses: np.ndarray

    @property
    def epsilon_estimate(self):
        """:func:`epsilon_from_rates` of the observed rates at delta = 0: a point estimate, not a bound."""
        return float(epsilon_from_rate_arrays(self.fpr, 1.0 - self.tpr, 0.0))


def loss_threshold_attack(theta, X_members, y_members, X_nonmembers, y_nonmembers, *, threshold=None):
    r"""Membership inference by loss threshold: "a record is a member iff its loss is <= tau".

    .. math:: \ell(\theta; x, y) = \ln(1+e^{-y\,\theta\cdot x}), \qquad
              \widehat{\text{member}}(x, y) = [\ell(\theta; x, y) \le \tau]

    The default :math:`\tau` is the mean training loss, which the attacker is assumed to know (Yeom et al.
    2018, Alg. 1). An overfitted model has a small loss on its members and a larger one elsewhere, so the
    attack works; a DP model bounds it: :math:`\mathrm{TPR} \le e^\varepsilon\,\mathrm{FPR} + \delta`.

    The records of one dataset are not independent trials of the DP game, so the rates of one model do
    **not** give a confidence bound on epsilon; use :func:`canary_audit` for that.

    Parameters
    ----------
    theta : array_like, shape (d,)
    X_members, y_members : arrays
        The training records.
    X_nonmembers, y_nonmembers : arrays
        Records from the same distribution the model never saw.
    threshold : float, optional

    Returns
    -------
    MembershipAttackResult
    """
    Xm = check_features(X_members, "X_members")
    ym = check_labels(y_members, Xm.shape[0], "y_members")
    Xn = check_features(X_nonmembers, "X_nonmembers")
    yn = check_labels(y_nonmembers, Xn.shape[0], "y_nonmembers")
    if Xn.shape[1] != Xm.shape[1]:
        raise ValueError(f"X_nonmembers has {Xn.shape[1]} columns but X_members has {Xm.shape[1]}")
    theta = check_theta(theta, Xm.shape[1])
    member_losses = np.logaddexp(0.0, -ym * (Xm @ theta))
    nonmember_losses = np.logaddexp(0.0, -yn * (Xn @ theta))
    if threshold is None:
        tau = float(member_losses.mean())
    else:
        tau = check_nonnegative(threshold, "threshold", allow_inf=True)
    tpr = float(np.mean(member_losses <= tau))
    fpr = float(np.mean(nonmember_losses <= tau))
    from scipy import stats  # imported when used: workers that only train skip it
    ranks = stats.rankdata(np.concatenate([member_losses, nonmember_losses]))   # Mann-Whitney U
    n_m, n_n = member_losses.size, nonmember_losses.size
    u_nonmembers_higher = ranks[n_m:].sum() - n_n * (n_n + 1) / 2
    return MembershipAttackResult(tpr=tpr, fpr=fpr, advantage=tpr - fpr, auc=float(u_nonmembers_higher / (n_m * n_n)),
                                  threshold=tau, member_losses=member_losses, nonmember_losses=nonmember_losses)

