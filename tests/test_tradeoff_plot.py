"""Audits on the trade-off plane (dpedu.lab.audit.regions) and the figure that draws them (dpedu.lab.plotting.tradeoff)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.figure import Figure

from dpedu.accountants import GaussianEvent
from dpedu.accountants.gdp import certified_mu
from dpedu.accountants.tradeoff import epsilon_delta_tradeoff, gaussian_curve, tradeoff_curve
from dpedu.lab.audit import canary_audit, dp_sgd_trainer, make_audit_data, make_canary
from dpedu.lab.audit.bugs import bug_hunt
from dpedu.lab.audit.regions import AuditRegion, audit_region, result_ledger
from dpedu.lab.plotting.tradeoff import plot_tradeoff, plot_tradeoff_panels


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
    from dpedu.lab.audit import epsilon_from_rates

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


@pytest.fixture(scope="module")
def one_run_pair():
    """One-run audits (gradient canaries) of the planted bug noise_not_scaled_by_clip and of correct DP-SGD."""
    from dpedu.lab.audit.bugs import bug_setting, buggy_trainer
    from dpedu.lab.audit.one_run import one_run_trainer_audit
    from dpedu.lab.audit.whitebox import observed_trainer

    setting = bug_setting("noise_not_scaled_by_clip")
    out = {}
    for name, train in (("bug", buggy_trainer("noise_not_scaled_by_clip", **setting["trainer"])),
                        ("correct", observed_trainer(**setting["trainer"]))):
        out[name] = one_run_trainer_audit(train, setting["X"], setting["y"], m=1000,
                                          clip_norm=setting["trainer"]["clip_norm"], rng=0)
    out["ledger"] = train(setting["X"], setting["y"], 0).ledger
    return out


def test_one_run_bound_is_a_violation_exactly_when_the_claim_certifies_it():
    """Flagged iff the curve certifies (eps_lb, delta): a profile pair with eps_j <= eps_lb and delta_j <= delta."""
    from dpedu.ground.gaussian import analytic_noise_multiplier
    from dpedu.accountants.tradeoff import TradeoffCurve

    region = AuditRegion("one-run", math.nan, math.nan, (math.nan,) * 2, (math.nan,) * 2, 0.95, 0.95,
                         epsilon_lower=1.0, delta=1e-5)
    alphas = np.linspace(0, 1, 101)

    def pair(eps, delta):
        return TradeoffCurve("pair", alphas, epsilon_delta_tradeoff(alphas, eps, delta), np.array([eps]),
                             np.array([delta]))

    assert region.is_one_run and not region.is_gaussian
    assert region.violates(pair(0.99, 1e-5))                    # certifies (0.99, 1e-5): contradicts eps >= 1
    assert not region.violates(pair(1.01, 1e-5))                # a weaker claim is not refuted
    assert not region.violates(pair(0.5, 1e-3))                 # small eps but at a larger delta: not refuted
    assert region.violates(gaussian_curve(1 / analytic_noise_multiplier(0.99, 1e-5)))
    assert not region.violates(gaussian_curve(1 / analytic_noise_multiplier(1.01, 1e-5)))
    # a claim crossing f_{1, 1e-5} (below it near FPR 0, above in the middle) is not refuted
    crossing = pair(0.5, 1e-2)
    floor = epsilon_delta_tradeoff(alphas, 1.0, 1e-5)
    assert np.any(crossing.beta < floor) and np.any(crossing.beta > floor) and not region.violates(crossing)


def test_one_run_planted_bug_is_flagged_and_the_correct_run_is_not(one_run_pair):
    from dpedu.lab.audit.regions import one_run_region

    ledger = one_run_pair["ledger"]
    curves = [tradeoff_curve(ledger, name) for name in ("moments", "rdp", "pld")]
    curves.append(gaussian_curve(certified_mu(ledger)))
    for name, flagged in (("bug", True), ("correct", False)):
        result = one_run_pair[name]
        region = one_run_region(result)
        assert region.epsilon_lower == result.epsilon_lower and region.delta == result.delta
        for curve in curves:
            assert region.violates(curve) is flagged
        # the same verdict from the accountants' epsilon at the audit's delta
        assert all((eps <= result.epsilon_lower) is flagged for eps in result.upper_bounds.values())
        fig = Figure(figsize=(7.0, 10.5))
        axes, violations = plot_tradeoff_panels(curves, audits=[region], figure=fig)
        assert bool(violations) is flagged
        assert any("one-run audit" in line.get_label() and "goes below this somewhere" in line.get_label()
                   and line.get_linestyle() == "--" for line in axes[0].lines)
        assert any("proven violation" in t.get_text() for t in axes[0].texts) is flagged
    assert set(violations) == set()


def test_one_run_region_at_another_delta_and_bad_input(one_run_pair):
    from dpedu.lab.audit import one_run_epsilon_lower_bound
    from dpedu.lab.audit.regions import one_run_region

    result = one_run_pair["bug"]
    region = one_run_region(result, delta=1e-3, label="one run")
    assert region.label == "one run" and region.delta == 1e-3
    assert region.epsilon_lower == one_run_epsilon_lower_bound(m=result.m, r=result.guesses, v=result.correct,
                                                               delta=1e-3, confidence=result.confidence)
    with pytest.raises(TypeError, match="result"):
        one_run_region(audit_region.__name__)
    with pytest.raises(ValueError, match="delta"):
        one_run_region(result, delta=1.5)


def test_one_run_trainer_audit_is_seeded_and_checks_its_input():
    from dpedu.lab.audit import one_run_trainer_audit
    from dpedu.lab.audit.bugs import bug_setting, buggy_trainer

    setting = bug_setting("noise_not_scaled_by_clip")
    train = buggy_trainer("noise_not_scaled_by_clip", **setting["trainer"])
    X, y = setting["X"], setting["y"]
    first, second = (one_run_trainer_audit(train, X, y, m=200, clip_norm=10.0, rng=3) for _ in range(2))
    assert (first.correct, first.epsilon_lower) == (second.correct, second.epsilon_lower)
    assert first.guesses == 40 and first.mode == "whitebox" and first.noise_multiplier == 4.0
    with pytest.raises(TypeError, match="train"):
        one_run_trainer_audit("train", X, y)
    with pytest.raises(ValueError, match="k_positive"):
        one_run_trainer_audit(train, X, y, m=10, k_positive=8, k_negative=8)
    with pytest.raises(ValueError, match="clip_norm"):
        one_run_trainer_audit(train, X, y, clip_norm=0.0)
