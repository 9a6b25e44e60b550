"""The research extensions: beyond training and accounting a run, measuring and reporting it.

- :mod:`~dpedu.research.selection` - private selection: the best of K runs at a stated total cost
- :mod:`~dpedu.research.tuning` - ``PrivateHyperparameterSearch``, the scikit-learn face of private tuning
- :mod:`~dpedu.research.statement` - ``privacy_statement()``: what a paper reports about a run
- :mod:`~dpedu.research.audit` - empirical lower bounds on epsilon: canary, white-box and one-run audits,
  planted bugs
- :mod:`~dpedu.research.experiments` - accounting tables and training sweeps behind the chapters and benchmarks

The textbook tier never imports from here; the estimator imports only ``statement`` (to report its run).
"""
