r"""The engine room: what the textbook stands on, kept out of the textbook's way.

- :mod:`~dpedu.engine.validation` - argument checks (each refusal names the argument and what is allowed)
- :mod:`~dpedu.engine.parallel` - seeded parallel maps (the same numbers for any ``n_jobs`` and joblib backend)
- :mod:`~dpedu.engine.logistic_fast`, :mod:`~dpedu.engine.mlp_fast`, :mod:`~dpedu.engine.dp_sgd_fast` - fast forms
  of textbook functions, chosen for speed and named for what they are

The textbook tier (:mod:`dpedu.clipping`, :mod:`dpedu.models.logistic`, ...) is what a chapter prints: each
function reads as its formula and checks its arguments. A training loop calls the same mathematics thousands
of times on data it validated once, so it uses the forms here instead:

==========================================================  ==========================================================
:func:`logistic_fast.clipped_gradient_sum`                  ``L2_clip(per_example_gradients(theta, X, y), C).sum(0)``
                                                            in two matrix-vector products (no n x d matrix)
:func:`logistic_fast.loss_and_clipped_gradient_sum`         the mean loss as well, from the same ``X @ theta``
:func:`logistic_fast.mean_loss`                             ``loss(theta, X, y)``
:func:`mlp_fast.clipped_gradient_sum`                       ``L2_clip(MLP.per_example_gradients(...), C).sum(0)``
                                                            from per-example norms (one weighted backward pass)
:func:`dp_sgd_fast.logistic_dp_sgd_steps`                   ``run_dp_sgd``'s loop of ``dp_sgd_step`` for logistic
                                                            regression at a fixed C, to the bit, checked once
==========================================================  ==========================================================

Engine functions do **not** validate their arguments (the caller did); ``tests/test_engine.py`` pins each one
to its textbook function on random and adversarial inputs (zero rows, huge and tiny norms, empty batches,
norms exactly C); a loop is pinned to the textbook's loop to the bit.
"""
