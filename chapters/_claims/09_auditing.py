# Claims of chapter 9's prose (run in the chapter's kernel after it executed; see README.md).
import math as _math

assert non_private.epsilon_lower > 0 and dp_run.epsilon_lower < 10, \
    "'The lower bound is well below the accountants' epsilon'"
assert abs(gaussian_epsilon_exact(DELTA, 0.5) - 10) < 0.1, "'the true epsilon ~ 10'"
assert dp_run.epsilon_lower <= min(dp_run.upper_bounds.values()), "'lower <= upper is the consistency check'"
assert buggy.epsilon_lower > min(buggy.upper_bounds.values()), \
    "'The audit proves more leakage than the claimed (epsilon, delta) allows'"
