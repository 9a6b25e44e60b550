# Claims of chapter 11's prose (run in the chapter's kernel after it executed; see README.md).
_ratio_tree = per_prefix[("identity", 1024)] / per_prefix[("tree", 1024)]
_ratio_sqrt = per_prefix[("tree", 1024)] / per_prefix[("square_root", 1024)]
assert 8 < _ratio_tree < 12, f"'its error per prefix sum is about ten times smaller': {_ratio_tree}"
assert _ratio_sqrt > 5, f"'the square root's is smaller again, by more than five': {_ratio_sqrt}"
assert abs(sensitivity(make_factorization("tree", 1024).C) ** 2 - 11) < 1e-9, "'the tree's sensitivity is sqrt(11)'"
for _n in (256, 1024):
    assert per_prefix[("banded", _n)] > max(per_prefix[(k, _n)] for k in ("tree", "tree_efficient", "square_root")), \
        "'At n = 256 and 1024 the banded square root is the worst of the correlated ones on one pass'"
_banded = make_factorization("banded", 40, bands=4)
assert abs(sensitivity(_banded.C, patterns) - 2 * sensitivity(_banded.C)) < 1e-9, \
    "'its sensitivity grows only like sqrt(passes)' (4 passes: twice)"
