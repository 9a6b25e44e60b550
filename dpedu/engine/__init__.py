r"""The ground floor: what every other layer stands on.

- :mod:`~dpedu.engine.validation` - argument checks and :func:`~dpedu.engine.validation.door`, which applies a
  public function's checks once, where a user calls it (each refusal names the argument and what is allowed)
- :mod:`~dpedu.engine.parallel` - seeded parallel maps (the same numbers for any ``n_jobs`` and joblib backend)
"""
