"""Independent seeded tasks, run serially, on local processes, or on a cluster: same seeds, same result.

Audits and training sweeps are loops over independent tasks (one training, or one pair of trainings), each
with its own randomness. :func:`map_seeded` gives task i its own :class:`numpy.random.Generator` and runs
the tasks through :mod:`joblib`:

* by default the generators are spawned from one root, ``numpy.random.SeedSequence(rng).spawn(n)`` (via
  :meth:`numpy.random.Generator.spawn`), so they are statistically independent;
* or the caller gives each task its seed (``seeds=``), e.g. the same seed ``j`` at every grid point of a
  sweep (common random numbers).

Either way the i-th result depends only on the seeds and i, never on ``n_jobs``, on the order in which
tasks finish, or on the backend. The tasks are sent to the workers in a few contiguous chunks
(about ``chunks_per_job`` per worker, halving in size: :func:`chunk_bounds`), so that thousands of tiny tasks do not
pay joblib's per-task overhead and the workers finish together.

**On a Dask cluster.** Create a :class:`dask.distributed.Client` (it registers joblib's ``"dask"``
backend) and run inside ``joblib.parallel_backend("dask")``::

    from dask.distributed import Client, LocalCluster
    import joblib

    client = Client(LocalCluster(n_workers=4))       # or Client("scheduler-address:8786")
    with joblib.parallel_backend("dask"):
        result = canary_audit(train, X, y, canary, runs=2000, rng=0, n_jobs=-1)   # same numbers as n_jobs=1

>>> draw = lambda rng: float(rng.random())
>>> map_seeded(draw, 3, rng=0) == map_seeded(draw, 3, rng=0, n_jobs=2)
True
>>> map_seeded(lambda item, rng: item + int(rng.integers(10)), 2, items=[100, 200], seeds=[7, 7])
[109, 209]
"""

from __future__ import annotations

import numbers
import time

import numpy as np

from ..ground.validation import check_positive_int, check_rng

__all__ = ["map_seeded", "check_n_jobs", "chunk_bounds"]


def check_n_jobs(n_jobs, name="n_jobs"):
    """``n_jobs`` as joblib reads it: a positive integer, or a negative one (-1: every core); not 0.

    ``name`` is what the error calls it (the command line passes ``"--n-jobs"``).

    Raises
    ------
    ValueError
        For 0, a bool or a non-integer.
    """
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"{name} must be a nonzero integer (1: serial, 2: two workers, -1: every core); got {n_jobs!r}")
    return int(n_jobs)


def chunk_bounds(n, workers, chunks_per_job=6):
    """Boundaries ``[0, b_1, ..., n]`` of contiguous chunks of ``range(n)`` for ``workers`` workers, largest first.

    Each worker's share, ``n / workers`` tasks, goes out as about ``chunks_per_job`` chunks of halving size:
    1/2, 1/4, ..., down to ``1/2**(chunks_per_job - 1)`` of a share, the size of the last ones (rounding can add
    one; small ``n`` gives fewer). Each round of ``workers`` chunks takes half of the tasks still left. Big
    chunks first keep the dispatches few; small chunks last keep the workers finishing together, so none waits
    idle at the end for one that drew a big last chunk (on a busy machine one worker can run a chunk 1.5x
    slower than the other).

    >>> chunk_bounds(2000, 2, chunks_per_job=4)
    [0, 500, 1000, 1250, 1500, 1625, 1750, 1875, 2000]
    >>> chunk_bounds(2000, 2)[-5:]
    [1876, 1908, 1940, 1972, 2000]
    >>> chunk_bounds(5, 2)
    [0, 2, 4, 5]
    """
    n = check_positive_int(n, "n")
    workers = check_positive_int(workers, "workers")
    chunks_per_job = check_positive_int(chunks_per_job, "chunks_per_job", maximum=60)
    smallest = -(-n // (workers * 2 ** (chunks_per_job - 1)))     # ceil
    bounds = [0]
    while bounds[-1] < n:
        left = n - bounds[-1]
        size = max(smallest, -(-left // (2 * workers)))
        for _ in range(workers):
            if bounds[-1] < n:
                bounds.append(min(n, bounds[-1] + size))
    return bounds


class _Chunk:
    """Runs one task over a contiguous slice of items and seeds in a worker (picklable)."""

    def __init__(self, task, with_items):
        self.task, self.with_items = task, with_items

    def __call__(self, items, seeds):
        generators = [_generator(seed) for seed in seeds]
        if self.with_items:
            return [self.task(item, g) for item, g in zip(items, generators)]
        return [self.task(g) for g in generators]


class _SpawnedSeeds:
    """Children ``first .. stop - 1`` of one seed sequence, as a few numbers rather than n objects.

    ``SeedSequence.spawn`` gives child k the parent's entropy and pool size and the spawn key
    ``parent.spawn_key + (k,)`` (NumPy's documented scheme), so a chunk of children travels to a worker as
    (entropy, key prefix, pool size, range) and is rebuilt there: bytes instead of kilobytes per chunk.
    Slicing gives a sub-range; iterating gives ``(bit generator class, SeedSequence)`` pairs.
    """

    def __init__(self, bit_generator, entropy, prefix, pool_size, first, stop):
        self.bit_generator, self.entropy, self.prefix, self.pool_size = bit_generator, entropy, prefix, pool_size
        self.first, self.stop = first, stop

    def __len__(self):
        return self.stop - self.first

    def __getitem__(self, part):
        first, stop, _ = part.indices(len(self))
        return _SpawnedSeeds(self.bit_generator, self.entropy, self.prefix, self.pool_size,
                             self.first + first, self.first + max(first, stop))

    def __iter__(self):
        for k in range(self.first, self.stop):
            yield self.bit_generator, np.random.SeedSequence(self.entropy, spawn_key=self.prefix + (k,),
                                                             pool_size=self.pool_size)


def _generator(seed):
    """The generator of one task: a (bit generator class, SeedSequence) pair, or a seed for check_rng."""
    if isinstance(seed, tuple):
        bit_generator, sequence = seed
        return np.random.Generator(bit_generator(sequence))
    return check_rng(seed)


def _seeds(n, rng, seeds):
    """One seed per task: spawned from ``rng`` exactly as ``Generator.spawn`` would, or the caller's, checked."""
    if seeds is None:
        root = check_rng(rng).bit_generator
        children = root.seed_seq.spawn(n)             # advances the root, as Generator.spawn does
        first, last = children[0].spawn_key, children[-1].spawn_key
        prefix = first[:-1]
        if last != prefix + (first[-1] + n - 1,):     # not NumPy's documented scheme: send the children
            return [(type(root), child) for child in children]
        return _SpawnedSeeds(type(root), children[0].entropy, prefix, children[0].pool_size,
                             first[-1], first[-1] + n)
    if rng is not None:
        raise ValueError("give either rng (a root to spawn the tasks' generators from) or seeds (one per task), not both")
    seeds = list(seeds)
    if len(seeds) != n:
        raise ValueError(f"seeds must hold one seed per task ({n}); got {len(seeds)}")
    for i, seed in enumerate(seeds):
        check_rng(seed, f"seeds[{i}]")              # refused here, before any task runs
    return seeds


def _run(chunk, items, seeds, n_jobs, chunks_per_job):
    """Yield the results of ``chunk`` over ``items`` and ``seeds``, in order, one chunk's list at a time."""
    n = len(seeds)
    if n_jobs == 1:
        for i in range(n):                        # one at a time, so that progress is reported as it happens
            yield chunk(items[i:i + 1], seeds[i:i + 1])
        return
    import joblib

    workers = joblib.effective_n_jobs(n_jobs)
    bounds = chunk_bounds(n, max(1, workers), chunks_per_job)
    parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator")
    yield from parallel(joblib.delayed(chunk)(items[a:b], seeds[a:b]) for a, b in zip(bounds[:-1], bounds[1:]))


def map_seeded(task, n, *, rng=None, seeds=None, items=None, n_jobs=1, chunks_per_job=6, progress=None,
               desc="tasks", unit="tasks", labels=None):
    """``[task(rng_0), ..., task(rng_{n-1})]`` with one generator per task, in any number of workers.

    Parameters
    ----------
    task : callable
        ``task(generator) -> result``, or ``task(item, generator)`` when ``items`` is given. It must use
        only that generator for randomness. With ``n_jobs != 1`` it is pickled (cloudpickle: closures are
        fine), once per chunk of tasks.
    n : int
        Number of tasks (>= 1).
    rng : None, int, SeedSequence or Generator
        The root the generators are spawned from (:func:`dpedu.ground.validation.check_rng`; a Generator's seed
        sequence spawns the children). Not together with ``seeds``.
    seeds : sequence of n seeds, optional
        The seed of each task instead (anything :func:`dpedu.ground.validation.check_rng` accepts); task i gets
        ``check_rng(seeds[i])``, so equal seeds give equal streams.
    items : sequence of n objects, optional
        Task i is called as ``task(items[i], generator_i)``.
    n_jobs : int
        1 runs in this process; otherwise :class:`joblib.Parallel` with this many workers (-1: every core)
        under the active joblib backend: loky processes by default, ``joblib.parallel_backend("dask")`` for
        a Dask cluster (see the module docstring), ``"threading"`` for threads.
    chunks_per_job : int
        With ``n_jobs != 1`` each worker's share of the tasks goes out as about ``chunks_per_job`` contiguous
        chunks, halving in size (:func:`chunk_bounds`; 1 to 60): few enough that per-dispatch costs do not
        dominate tiny tasks, small enough at the end that no worker waits idle for another. It does not change
        the results.
    progress : None, bool or callable
        ``True``: a tqdm progress bar. A callable: called with a message, ``"audit: 20/200 trainings
        (1.2 s)"`` after about every 10% of the tasks, or, with ``labels``, ``"[k/n] <label of task k>"``
        after every task. ``None``/``False``: silent. Messages arrive in task order, as chunks finish.
    desc, unit : str
        Label and unit of the progress report.
    labels : sequence of n str, optional
        What each task is, for a progress callable.

    Returns
    -------
    list
        The results in task order.

    Raises
    ------
    TypeError
        If ``task`` or ``progress`` is of the wrong kind.
    ValueError
        If ``n``, ``n_jobs``, ``chunks_per_job``, ``seeds``, ``items`` or ``labels`` is invalid.

    Notes
    -----
    Going parallel has a fixed cost: the first call starts the workers, and each imports NumPy, SciPy and
    dpedu (about a second per worker; joblib then keeps its loky workers for later calls). Below a few
    seconds of work, ``n_jobs=1`` is faster. On a Dask cluster every worker needs dpedu installed, and
    the data travel with each chunk of tasks.
    """
    if not callable(task):
        raise TypeError(f"task must be callable; got {task!r}")
    n = check_positive_int(n, "n")
    n_jobs = check_n_jobs(n_jobs)
    chunks_per_job = check_positive_int(chunks_per_job, "chunks_per_job", maximum=60)
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise TypeError(f"progress must be None, True/False or a callable taking one message; got {progress!r}")
    for name, values in (("items", items), ("labels", labels)):
        if values is not None and len(values) != n:
            raise ValueError(f"{name} must hold one entry per task ({n}); got {len(values)}")
    chunks = _run(_Chunk(task, items is not None), list(items) if items is not None else [None] * n,
                  _seeds(n, rng, seeds), n_jobs, chunks_per_job)
    bar = None
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=n, desc=desc, unit=unit, leave=False)
    out, every, start = [], max(1, n // 10), time.perf_counter()
    for results in chunks:
        for result in results:
            out.append(result)
            if bar is not None:
                bar.update(1)
            elif callable(progress) and labels is not None:
                progress(f"[{len(out)}/{n}] {labels[len(out) - 1]}")
            elif callable(progress) and (len(out) % every == 0 or len(out) == n):
                progress(f"{desc}: {len(out)}/{n} {unit} ({time.perf_counter() - start:.1f} s)")
    if bar is not None:
        bar.close()
    return out
