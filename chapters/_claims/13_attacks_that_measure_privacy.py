# Claims of chapter 13's prose (run in the chapter's kernel after it executed; see README.md).
_lira = attacks["lira-online"]
assert _lira.rocs["vulnerable"].tpr_low[0] > 0.001 and \
    _lira.rocs["vulnerable"].tpr_at[0] > 2 * _lira.rocs["all"].tpr_at[0], \
    "'Without noise the vulnerable records are found at a low FPR far more often than chance ... and far more often " \
    "than the records taken all together'"
assert set(attacks) == set(audit.ATTACKS), "'LiRA (online and offline) and RMIA'"
_eps1, _eps8 = runs[1].reports["lira-online"], runs[2].reports["lira-online"]
assert abs(_eps1.epsilon - 1.0) < 0.01 and abs(_eps8.epsilon - 8.0) < 0.01, "'ε = 1 and ε = 8 (PLD accountant)'"
assert all(not report.violations() for run in runs[1:] for report in run.reports.values()), \
    "'the attack's pooled ROC must lie under them' (the figure: every attack under its ceiling)"
assert _eps8.ceiling.best_tpr(0.001) > 0.02 and _eps1.ceiling.best_tpr(0.001) < 0.005, \
    "'at ε = 8 the ceiling leaves a lot of room (a TPR of several percent at FPR 0.1 %)'; at ε = 1 it hugs the diagonal"
assert all(report.rocs[g].tpr_at[0] < _eps8.ceiling.best_tpr(0.001) / 2 for report in runs[2].reports.values()
           for g in report.rocs), "'the attacks use little of it'"
assert buggy.violations(), "'The attack's TPR interval lies above the ceiling of the claimed ε'"
assert buggy.epsilon < 1.01, "the buggy trainer claims epsilon = 1"
assert buggy.audit.epsilon_lower <= math.log((MODELS // 4) / math.log(40)) + 0.7, \
    "'With E evaluation models it can prove at most about ln((E/2)/ln 40)'"
for _run in runs + mlp_runs:
    for _report in _run.reports.values():
        assert _report.audit.consistent, "an audit of correct code stays under the accountant's epsilon"
assert canary_run.consistent, "the canary audit stays under the accountant's epsilon"
assert min_fpr_for_tpr(0.5, 1.0, 1e-5) > 0.18, "'an attacker must accuse at least 18 % of the non-members'"
