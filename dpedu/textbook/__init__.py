r"""The textbook: what chapters 0-5 print, and what a default run executes.

- :mod:`~dpedu.textbook.clipping` - ``L2_clip`` and per-example norms
- :mod:`~dpedu.textbook.mechanisms` - the Laplace and Gaussian mechanisms (:mod:`~dpedu.textbook.snapping`:
  Mironov's snapping mechanism)
- :mod:`~dpedu.textbook.models` - logistic regression and a small MLP, as their formulas
- :mod:`~dpedu.textbook.training` - gradient descent, the book's noisy gradient descent, DP-SGD, and one sampling
  object per scheme
- :mod:`~dpedu.textbook.learners` - the other private learners: output and objective perturbation, DP-FTRL and
  matrix factorisation, projected noisy gradient descent
- :mod:`~dpedu.textbook.datasets` - the Adult data and a toy problem
"""
