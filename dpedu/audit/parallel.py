"""Independent audit trainings, run serially, on local processes, or on a cluster: same seeds, same result.

Every audit is a loop over independent tasks (one training, or one pair of trainings). :func:`map_seeded`
gives task i its own :class:`numpy.random.Generator`, spawned from one root
(``numpy.random.SeedSequence(seed).spawn(n)``, via :meth:`numpy.random.Generator.spawn`), and runs the
tasks through :mod:`joblib`. The i-th result depends only on the root seed and i, never on ``n_jobs``, the
order tasks finish in, or the backend, so::

    with joblib.parallel_backend("dask"):          # a dask.distributed Client must exist
        result = canary_audit(..., n_jobs=-1)      # the same numbers as n_jobs=1

>>> import numpy as np
>>> map_seeded(lambda rng: float(rng.random()), 3, rng=0) == map_seeded(lambda rng: float(rng.random()), 3, rng=0, n_jobs=2)
True
"""

from __future__ import annotations

import numbers
import time

from ..validation import check_positive_int, check_rng

__all__ = ["map_seeded", "check_n_jobs"]


def check_n_jobs(n_jobs):
    """``n_jobs`` as joblib reads it: a positive integer, or a negative one (-1: every core); not 0."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a nonzero integer (1: serial, 2: two workers, -1: every core); got {n_jobs!r}")
    return int(n_jobs)


def map_seeded(task, n, *, rng=None, n_jobs=1, progress=None, desc="audit", unit="trainings"):
    """``[task(rng_0), ..., task(rng_{n-1})]`` with independent generators spawned from ``rng``.

    Parameters
    ----------
    task : callable
        ``task(generator) -> result``; must use only that generator for randomness. With ``n_jobs != 1`` it
        is pickled (cloudpickle: closures are fine).
    n : int
        Number of tasks (>= 1).
    rng : None, int, SeedSequence or Generator
        The root (:func:`dpedu.validation.check_rng`); a Generator's seed sequence spawns the children.
    n_jobs : int
        1 runs in this process; otherwise :class:`joblib.Parallel` with this many workers under the
        active joblib backend (loky processes by default, ``joblib.parallel_backend("dask")`` for a cluster).
    progress : None, bool or callable
        ``True``: a tqdm progress bar. A callable: called with a message like ``"audit: 20/200 trainings
        (1.2 s)"`` after about every 10% of the tasks. ``None``/``False``: silent.
    desc, unit : str
        Label and unit of the progress report.

    Returns
    -------
    list
        The results in task order.
    """
    if not callable(task):
        raise TypeError(f"task must be callable; got {task!r}")
    n = check_positive_int(n, "n")
    n_jobs = check_n_jobs(n_jobs)
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise TypeError(f"progress must be None, True/False or a callable taking one message; got {progress!r}")
    generators = check_rng(rng).spawn(n)
    if n_jobs == 1:
        results = (task(g) for g in generators)
    else:
        import joblib

        parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator")
        results = parallel(joblib.delayed(task)(g) for g in generators)
    if progress is True:
        from tqdm.auto import tqdm

        return list(tqdm(results, total=n, desc=desc, unit=unit, leave=False))
    if not callable(progress):
        return list(results)
    out, every, start = [], max(1, n // 10), time.perf_counter()
    for result in results:
        out.append(result)
        if len(out) % every == 0 or len(out) == n:
            progress(f"{desc}: {len(out)}/{n} {unit} ({time.perf_counter() - start:.1f} s)")
    return out
