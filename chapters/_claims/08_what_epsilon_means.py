# Claims of chapter 8's prose (run in the chapter's kernel after it executed; see README.md).
import math as _math

from dpedu.accountants import SubsampledGaussianEvent as _SGE
from dpedu.accountants import make_accountant as _make
from dpedu.accountants.tradeoff import gaussian_tradeoff
from dpedu.ground.gaussian import gaussian_epsilon_exact as _eps_of

# the testing game
assert abs(gaussian_tradeoff(0.01, 1.0) - 0.91) < 0.01, "'at an FPR of 1 % the attacker misses about 91 %'"

# Abadi et al.'s run
_tpr = {name: c.best_tpr(0.01) for name, c in curves.items() if c.applies}
assert round(_tpr["pld"], 3) == 0.019, "'no attack finds more than about 1.9 % of the members'"
assert round(_tpr["rdp"], 3) == 0.021 and round(_tpr["moments"], 3) == 0.027, "'(2.1 % and 2.7 %)'"
assert round(_tpr["advanced"], 2) == 0.29 and _tpr["advanced"] == _tpr["strong"], "'allow 29 %' and coincide"
assert _tpr["sequential"] == 1.0, "'its best TPR is 1'"
assert round(_make("sequential").compose(*ABADI[0]).get_epsilon(DELTA)) == 223, "'epsilon ~ 223'"
assert not curves["zcdp"].applies, "'zCDP ... gives no curve'"
assert 0 <= bracket_tpr[1] - bracket_tpr[0] < 1e-4, "'The PLD's own bracket ... narrower than 1e-4 in TPR'"
assert _tpr["pld"] <= _tpr["rdp"] <= _tpr["moments"] <= _tpr["advanced"], "the ordering of the table"
assert round(abadi_mu, 3) == 0.256, "'G_mu with mu = 0.256'"
assert round(100 * _tpr["pld"], 2) == 1.91 and round(100 * gdp.best_tpr(0.01), 2) == 1.92, "'1.91 % against 1.92 %'"

# CLT against certified mu
_clt, _cert, _eps_clt, _eps_pld = gdp_rows[(4.0, 0.01, 10_000)]
assert (round(_clt, 3), round(_cert, 3)) == (0.254, 0.256), "'excellent (0.254 against 0.256)'"
_clt, _cert, _eps_clt, _eps_pld = gdp_rows[(0.8, 0.01, 100)]
assert round(_clt, 2) == 0.19 and round(_eps_clt, 2) == 0.70 and round(_eps_pld, 2) == 1.51, \
    "'it says mu = 0.19 and epsilon = 0.70, while the PLD puts the run at epsilon = 1.51'"
_low, _ = _make("pld").compose(_SGE(0.8, 0.01), 100).epsilon_bracket(DELTA)
assert round(_low, 2) == 1.51 and _eps_clt < _low, "'(and its optimistic lower bound is just as high)'"
assert all(row[0] < row[1] for row in gdp_rows.values()), "the CLT mu is below the certified one in the table"

# audits
assert not small_violations, "'Correct code, no violation'"
assert white.mu_lower < 2.0 and white.mu_lower > 1.5, "'mu_lb is just below the true mu = 2'"
assert black.fnr_upper > gaussian_tradeoff(black.fpr_upper, 2.0), "'its upper-right corner ... lies above'"
assert set(bug_violations["white-box audit"]) == {c.label for c in bug_curves} | {f"GDP mu={bug_mu:.3g}"}, \
    "'Every curve is violated'"
assert bug_curves[2].beta_at(0.1) >= 0.8, "'at an FPR of 10 %, an FNR of at least 0.8'"

# groups
assert round(_eps_of(DELTA, 1 / (10 * abadi_mu))) == 14, "'into one with epsilon ~ 14'"

# the statement
assert statement.epsilon == _make("pld").compose(*ABADI[0]).get_epsilon(DELTA), "the statement's epsilon is the PLD's"
assert _math.isclose(statement.mu, abadi_mu), "the statement's mu is the certified one"
