r"""The ground floor: what every other layer stands on.

- :mod:`~dpedu.engine.validation` - argument checks (each refusal names the argument and what is allowed)
- :mod:`~dpedu.engine.door` - :func:`~dpedu.engine.door.door`, which applies a public function's checks once,
  where a user calls it, and the contract checks it names
- :mod:`~dpedu.engine.search` - the one monotone search every calibration and inversion uses
- :mod:`~dpedu.engine.parallel` - seeded parallel maps (the same numbers for any ``n_jobs`` and joblib backend)
"""
