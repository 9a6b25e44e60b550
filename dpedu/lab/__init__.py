"""The lab: beyond training and accounting a run, measuring and reporting it.

- :mod:`~dpedu.lab.selection` - private selection: the best of K runs at a stated total cost
- :mod:`~dpedu.lab.tuning` - ``PrivateHyperparameterSearch``, the scikit-learn face of private tuning
- :mod:`~dpedu.lab.statement` - ``privacy_statement()``: what a paper reports about a run
- :mod:`~dpedu.lab.audit` - empirical lower bounds on epsilon: canary, white-box and one-run audits,
  planted bugs
- :mod:`~dpedu.lab.experiments` - accounting tables and training sweeps behind the chapters and benchmarks

- :mod:`~dpedu.lab.estimator`, :mod:`~dpedu.lab.learner_estimators` - the scikit-learn estimators
- :mod:`~dpedu.lab.parallel` - seeded parallel maps (the same numbers for any ``n_jobs`` and joblib backend)
- :mod:`~dpedu.lab.plotting` - the figures

Nothing below (the ground, the textbook, the accountants) imports from here.
"""
