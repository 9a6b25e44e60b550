r"""The ground floor: what every other layer stands on.

- :mod:`~dpedu.ground.validation` - argument checks (each refusal names the argument and what is allowed)
- :mod:`~dpedu.ground.door` - :func:`~dpedu.ground.door.door`, which applies a public function's checks once,
  where a user calls it, and the contract checks it names
- :mod:`~dpedu.ground.search` - the one monotone search every calibration and inversion uses
- :mod:`~dpedu.ground.events`, :mod:`~dpedu.ground.events_allocation`, :mod:`~dpedu.ground.events_last_iterate` -
  what a release did (its mechanism, its sampling, the neighbouring relation it holds under)
- :mod:`~dpedu.ground.gaussian` - the Gaussian mechanism's closed forms (Balle and Wang 2018)
"""
