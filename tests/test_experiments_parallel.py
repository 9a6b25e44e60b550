"""dpedu.lab.parallel.map_seeded, and the training sweeps run through it: the numbers never depend on n_jobs or backend."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpedu.lab import experiments
from dpedu.textbook.datasets import make_toy
from dpedu.lab.parallel import check_n_jobs, chunk_bounds, map_seeded

X, Y = make_toy(n=60, d=3, rng=123)
DATA = (X[:40], Y[:40], X[40:], Y[40:])


def _draw(rng):
    return float(rng.random())


def _shifted(item, rng):
    return item + float(rng.random())


# --- map_seeded ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, workers, chunks_per_job", [(1, 1, 4), (1, 8, 4), (7, 3, 1), (10, 4, 4), (2000, 2, 4),
                                                       (2000, 2, 6), (2000, 2, 8), (5, 5, 2), (99_999, 8, 6),
                                                       (10**6, 3, 60)])
def test_chunks_cover_the_tasks_in_order_largest_first(n, workers, chunks_per_job):
    bounds = chunk_bounds(n, workers, chunks_per_job)
    sizes = np.diff(bounds)
    assert bounds[0] == 0 and bounds[-1] == n and sizes.min() >= 1
    assert np.all(sizes[1:] <= sizes[:-1])                        # never a bigger chunk after a smaller one
    assert len(sizes) <= workers * (chunks_per_job + 1)             # about chunks_per_job per worker
    share = n / workers
    smallest = -(-n // (workers * 2 ** (chunks_per_job - 1)))
    assert sizes[-1] <= smallest                                  # the last chunks are small ...
    assert sizes[0] == max(smallest, -(-n // (2 * workers)))      # ... the first half a share
    if chunks_per_job == 1:
        assert sizes[0] >= share - 1                              # one chunk per worker


@pytest.mark.parametrize("n_jobs, chunks_per_job", [(2, 1), (2, 4), (2, 50), (-1, 4)])
def test_map_seeded_does_not_depend_on_workers_or_chunking(n_jobs, chunks_per_job):
    serial = map_seeded(_draw, 23, rng=5)
    assert map_seeded(_draw, 23, rng=5, n_jobs=n_jobs, chunks_per_job=chunks_per_job) == serial
    assert serial == [float(g.random()) for g in np.random.default_rng(5).spawn(23)]
    assert len(set(serial)) == 23                                 # independent streams


def test_map_seeded_with_explicit_seeds_and_items():
    out = map_seeded(_shifted, 4, items=[0, 10, 20, 30], seeds=[1, 2, 1, 2], n_jobs=2)
    assert out[2] - out[0] == 20 and out[3] - out[1] == 20        # equal seeds, equal streams
    assert out[0] == float(np.random.default_rng(1).random())
    assert out == map_seeded(_shifted, 4, items=[0, 10, 20, 30], seeds=[1, 2, 1, 2])


def test_map_seeded_reports_progress_in_task_order():
    messages = []
    map_seeded(_draw, 20, rng=0, n_jobs=2, progress=messages.append, desc="demo", unit="draws")
    assert len(messages) == 10 and messages[-1].startswith("demo: 20/20 draws")
    labelled = []
    map_seeded(_draw, 3, rng=0, progress=labelled.append, labels=["a", "b", "c"])
    assert labelled == ["[1/3] a", "[2/3] b", "[3/3] c"]


@pytest.mark.parametrize("kwargs, match", [
    ({"n_jobs": 0}, "n_jobs"), ({"n_jobs": 1.5}, "n_jobs"), ({"n_jobs": True}, "n_jobs"),
    ({"chunks_per_job": 0}, "chunks_per_job"), ({"seeds": [1, 2]}, "seeds"), ({"rng": 1, "seeds": [1, 2, 3]}, "seeds"),
    ({"items": [1]}, "items"), ({"labels": ["a"]}, "labels"), ({"seeds": [1, -2, 3]}, "seeds"),
])
def test_map_seeded_refuses_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        map_seeded(_draw, 3, **kwargs)


def test_map_seeded_refuses_a_non_callable_task_or_progress():
    with pytest.raises(TypeError, match="task"):
        map_seeded(3, 3)
    with pytest.raises(TypeError, match="progress"):
        map_seeded(_draw, 3, progress="yes")
    assert check_n_jobs(-1) == -1


# --- the sweeps -------------------------------------------------------------------------------------------------

SWEEPS = [
    ("run_tradeoff", lambda **kw: experiments.run_tradeoff(
        DATA, epsilons=[0.5, 2.0], seeds=2, epochs=1, sampling_rate=0.25, baseline=False, rng=11, **kw),
     lambda r: [r.accuracies, r.noise_multipliers, r.achieved_epsilons]),
    ("run_epochs_tradeoff", lambda **kw: experiments.run_epochs_tradeoff(
        DATA, epsilon=1.0, epochs=[1, 2], seeds=2, sampling_rate=0.25, rng=3, **kw),
     lambda r: [r.accuracies, r.noise_multipliers]),
    ("run_clipping_noise_grid", lambda **kw: experiments.run_clipping_noise_grid(
        DATA, clip_norms=[0.5, 1.0], noise_multipliers=[1.0, 2.0], seeds=2, rng=5,
        settings=experiments.GridSettings(epochs=1, sampling_rate=0.25), **kw),
     lambda r: [r.accuracies, r.epsilons]),
    ("run_noisy_gd_tradeoff", lambda **kw: experiments.run_noisy_gd_tradeoff(
        DATA, epsilons_per_iteration=[0.1, 0.5], iterations=2, seeds=3, accountants=("rdp",), rng=11, **kw),
     lambda r: [r.accuracies, r.total_epsilons["book"], r.total_epsilons["rdp"]]),
]


def _quietly(call, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return call(**kw)


@pytest.mark.parametrize("name, call, parts", SWEEPS, ids=[s[0] for s in SWEEPS])
def test_sweeps_give_the_same_numbers_for_any_n_jobs(name, call, parts):
    serial, parallel = _quietly(call, n_jobs=1), _quietly(call, n_jobs=2)
    for a, b in zip(parts(serial), parts(parallel)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name, call, parts", SWEEPS, ids=[s[0] for s in SWEEPS])
def test_sweeps_report_each_fit_and_refuse_a_bad_n_jobs(name, call, parts):
    messages = []
    result = _quietly(call, progress=messages.append)
    accuracies = parts(result)[0].reshape(-1, parts(result)[0].shape[-1])
    assert len(messages) >= accuracies.size and messages[0].startswith(f"[1/{accuracies.size}]")
    with pytest.raises(ValueError, match="n_jobs"):
        _quietly(call, n_jobs=0)


def test_a_sweep_on_a_dask_cluster_gives_the_serial_result():
    import dask.distributed as distributed
    import joblib

    call, parts = SWEEPS[0][1], SWEEPS[0][2]
    serial = _quietly(call)
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        with joblib.parallel_backend("dask"):
            remote = _quietly(call, n_jobs=-1)
    for a, b in zip(parts(serial), parts(remote)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.Philox, np.random.SFC64])
def test_map_seeded_spawns_exactly_as_generator_spawn_whatever_the_root(bit_generator):
    # the workers receive seed sequences and build the generators themselves: the streams must be those of
    # Generator.spawn, for any bit generator, for a root that has spawned before, and for a nested root
    root = np.random.Generator(bit_generator(np.random.SeedSequence(11).spawn(2)[1]))
    twin = np.random.Generator(bit_generator(np.random.SeedSequence(11).spawn(2)[1]))
    root.spawn(3)
    twin.spawn(3)
    expected = [float(g.random()) for g in twin.spawn(9)]
    assert map_seeded(_draw, 9, rng=root, n_jobs=2, chunks_per_job=2) == expected
    assert [float(g.random()) for g in root.spawn(2)] == [float(g.random()) for g in twin.spawn(2)]  # same state


def test_map_seeded_checks_every_seed_before_running_a_task():
    ran = []
    with pytest.raises(TypeError, match=r"seeds\[2\]"):
        map_seeded(lambda rng: ran.append(1), 3, seeds=[1, 2, "x"])
    assert ran == []
