# Claims of chapter 12's prose (run in the chapter's kernel after it executed; see README.md).
for _target in (1.0, 3.0):
    _ratio = buys[_target, "last_iterate"][0] / buys[_target, "composition"][0]
    assert 0.6 < _ratio < 0.8, \
        f"'The proven bound cuts the noise by a quarter to a third at the same total epsilon': {_target}, {_ratio}"
    _gap = abs(buys[_target, "last_iterate"][1] - buys[_target, "composition"][1])
    assert _gap < 0.01, f"'and the accuracy does not move': {_target}, {_gap}"
