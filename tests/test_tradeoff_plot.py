"""Audits on the trade-off plane (dpedu.audit.regions) and the figure that draws them (dpedu.plotting.tradeoff)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.figure import Figure

from dpedu.accountants import GaussianEvent
from dpedu.accountants.gdp import certified_mu
from dpedu.accountants.tradeoff import epsilon_delta_tradeoff, gaussian_curve, tradeoff_curve
from dpedu.audit import canary_audit, dp_sgd_trainer, make_audit_data, make_canary
from dpedu.audit.bugs import bug_hunt
from dpedu.audit.regions import AuditRegion, audit_region, result_ledger
from dpedu.plotting.tradeoff import plot_tradeoff, plot_tradeoff_panels


@pytest.fixture(scope="module")
def canary():
    X, y = make_audit_data(n=50, d=2, rng=0)
    train = dp_sgd_trainer(noise_multiplier=1.0, sampling_rate=1.0, steps=4)
    return canary_audit(train, X, y, make_canary(X, y), runs=100, delta=1e-5, rng=0)


@pytest.fixture(scope="module")
def bug():
    return bug_hunt("noise_reused", runs=100, rng=0)


def test_canary_region_is_the_audits_own_bounds(canary):
    region = audit_region(canary)
    assert region.fpr_range[1] == pytest.approx(canary.fpr_upper) and region.fnr_range[1] == pytest.approx(canary.fnr_upper)
    assert region.fpr_range[0] <= region.fpr <= region.fpr_range[1]
    assert region.fnr_range[0] <= region.fnr <= region.fnr_range[1]
    curve = tradeoff_curve(canary_ledger := [(GaussianEvent(1.0), 4)], "pld")
    assert canary_ledger and not region.violates(curve)          # a correct run is never caught


def test_violation_is_the_corner_test():
    """A box violates f_{eps, 0} exactly when its corner is below it, i.e. when it proves epsilon > eps."""
    from dpedu.audit import epsilon_from_rates

    region = AuditRegion("box", 0.01, 0.2, (0.0, 0.02), (0.1, 0.3), 0.975, 0.95)
    proven = epsilon_from_rates(0.02, 0.3, delta=0.0)             # ln(0.98 / 0.3)
    for eps, expected in ((proven - 0.01, True), (proven + 0.01, False)):
        alphas = np.linspace(0, 1, 1001)
        curve = tradeoff_curve.__globals__["TradeoffCurve"](f"eps={eps:.3f}", alphas,
                                                           epsilon_delta_tradeoff(alphas, eps, 0.0),
                                                           np.array([eps]), np.array([0.0]))
        assert region.violates(curve) is expected


def test_planted_bug_is_a_proven_violation_on_a_bare_figure(bug):
    ledger = result_ledger(bug)
    curves = [tradeoff_curve(ledger, name) for name in ("moments", "rdp", "pld")]
    curves.append(gaussian_curve(certified_mu(ledger)))
    fig = Figure(figsize=(7.0, 11.0))                              # no pyplot anywhere
    axes, violations = plot_tradeoff_panels(curves, audits=[audit_region(bug, "white-box audit")], figure=fig)
    assert set(violations["white-box audit"]) == {c.label for c in curves}
    texts = [t.get_text() for t in axes[0].texts]
    assert any("proven violation" in t for t in texts)
    assert axes[1].get_xscale() == "log" and fig.get_size_inches()[0] <= 7.3


def test_gaussian_whitebox_bound_is_a_curve():
    result = bug_hunt("noise_not_scaled_by_clip", runs=60, rng=0)
    region = audit_region(result)
    assert region.is_gaussian and region.mu_lower > 1
    claimed = tradeoff_curve(result_ledger(result), "pld")
    assert region.violates(claimed)
    assert region.violates(gaussian_curve(0.5 * region.mu_lower))          # a claim of a smaller mu is refuted
    assert not region.violates(gaussian_curve(2.0 * region.mu_lower))  # a weaker claim is not
    plot = plot_tradeoff([claimed], audits=region, ax=Figure().subplots())
    assert plot.violations == {"white-box audit": ("pld",)}


def test_bad_input(canary):
    ax = Figure().subplots()
    with pytest.raises(TypeError, match="curves"):
        plot_tradeoff(["rdp"], ax=ax)
    with pytest.raises(TypeError, match="audits"):
        plot_tradeoff([gaussian_curve(1.0)], audits=[canary], ax=ax)
    with pytest.raises(ValueError, match="kind"):
        plot_tradeoff([gaussian_curve(1.0)], kind="log", ax=ax)
    with pytest.raises(TypeError, match="result"):
        audit_region(3.0)
    with pytest.raises(TypeError, match="curve"):
        audit_region(canary).violates(0.5)


def test_curves_that_do_not_apply_are_left_out():
    from dpedu.accountants import SubsampledGaussianEvent

    ledger = [(SubsampledGaussianEvent(4.0, 0.01), 100)]
    zcdp = tradeoff_curve(ledger, "zcdp")
    ax, violations = plot_tradeoff([zcdp, tradeoff_curve(ledger, "rdp")], ax=Figure().subplots())
    assert [line.get_label() for line in ax.lines][1:] == ["rdp"] and violations == {}
    assert not zcdp.applies and math.isnan(zcdp.beta_at(0.1))
