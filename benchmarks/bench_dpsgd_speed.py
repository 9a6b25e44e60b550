"""Time of one epoch of DP-SGD on the full Adult training set: logistic regression and the MLP, beside their floors.

Run:  python benchmarks/bench_dpsgd_speed.py [--repeat 7] [--samplers-only] [--no-opacus] [--threads N]

Each row is the best of ``--repeat`` runs of ``dp_sgd(..., epochs=1)`` (n = 30,162 rows, 105 columns with the
constant feature), measured side by side with the floor of any full-data gradient method: one bare pass
``u = X @ v; X.T @ u`` over the whole training set. The ratio column is time / bare pass.

**The floors.** Below dpedu's row at the rate the targets name, the same epoch written by hand in NumPy
(``handwritten_epoch`` for logistic regression, ``handwritten_mlp_epoch`` for the 16-unit MLP): the step's
arithmetic on the same kind of batches (Poisson, drawn by their binomial size as ``poisson_sample`` draws them),
no checks, no diagnostics, one full-data loss at the end as ``dp_sgd`` records one per epoch. The last column is
dpedu's time over its floor, measured in paired rounds (dpedu's epoch and the floor's back to back, the median of
their ratios): the target is at most 1.3 for both models. What one epoch costs besides the floor: checking X and
computing its row norms once, each step's batch object, the loop's records (batch sizes, inclusions) and the calls
through ``dp_sgd_step``, the model's clipped sum and ``gaussian_mechanism``.

The first table times 100 Poisson samples at q = 0.01 from the n rows, side by side: the two calls of the
binomial-size form alone (``rng.binomial``, ``rng.choice(..., replace=False)``) and dpedu's ``poisson_sample``
(which sorts the indices too).

**Opacus beside dpedu** (the last table). torch and opacus are benchmark-only: dpedu never imports them, and
without them the table is one line saying so. With them (``pip install -r benchmarks/requirements.txt``, best in a
separate virtual environment that sees dpedu's packages)::

    python -m venv --system-site-packages /tmp/benchvenv
    /tmp/benchvenv/bin/pip install -r benchmarks/requirements.txt
    PYTHONPATH=$PWD /tmp/benchvenv/bin/python benchmarks/bench_dpsgd_speed.py --repeat 3

Opacus runs the same epoch: the same X (constant column included) with labels mapped to {0, 1}
(``BCEWithLogitsLoss`` is then the logistic loss); logistic regression as ``torch.nn.Linear(d, 1, bias=False)``
from zero, the 16-unit MLP as ``Linear(d, 16)``, tanh, ``Linear(16, 1)`` with dpedu's initialisation
(W ~ N(0, 1/fan-in), biases 0); ``PrivacyEngine().make_private(noise_multiplier=z, max_grad_norm=C,
poisson_sampling=True)`` on a ``DataLoader`` of batch size q n (Opacus samples at rate 1 / len(loader) = q and
divides by ``int(q n)``, dpedu by q n); plain SGD at dpedu's learning rate; on the CPU, with as many torch threads
as numpy's BLAS uses. ``make_private`` runs once, outside the timing (dpedu's time includes its setup); Opacus's
time includes its data loader (records fetched and collated one by one, as ``make_private`` requires a loader);
each Opacus epoch ends, like ``dp_sgd``'s, with one full-data loss. Rows in float64 (dpedu's arithmetic) and
float32 (Opacus's usual). Each row: one warm-up epoch of each, then ``--repeat`` rounds of one dpedu epoch and one
Opacus epoch back to back; the best of each and their ratio come from the same run. The test accuracy after the
1 + ``--repeat`` epochs of each checks that Opacus really trains (a sanity check, not a claim about accuracy).
``--threads N`` gives numpy's BLAS and torch N threads each (on a loaded machine, more threads than free cores
slow torch's small operations most); ``--no-opacus`` skips the table.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

# the dpedu of this checkout (or, for one --against process, of the checkout it measures)
sys.path.insert(0, os.environ.get("DPEDU_BENCH_TREE") or os.path.join(os.path.dirname(__file__), os.pardir))

from dpedu.textbook.datasets import load_adult  # noqa: E402
from dpedu.lab.estimator import tuned_defaults  # noqa: E402
from dpedu.textbook.models import MLP, LogisticModel  # noqa: E402
from dpedu.textbook.training import dp_sgd, poisson_sample  # noqa: E402

try:  # benchmark-only: torch and opacus are never needed by dpedu
    import opacus
    import torch
except ImportError:
    opacus = torch = None

OPACUS_MISSING = "Opacus: not installed (pip install -r benchmarks/requirements.txt)"

#: The settings of every epoch in this benchmark: noise multiplier z, clipping norm C and dp_sgd's learning rate.
Z, C, LEARNING_RATE = 1.0, 0.5, 1.0


def best_time(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--samplers-only", action="store_true", help="print the sampler table only")
    parser.add_argument("--no-opacus", action="store_true", help="skip the Opacus table")
    parser.add_argument("--threads", type=int, help="limit numpy's BLAS (and torch) to this many threads "
                        "(needs threadpoolctl; default: numpy's own count, which torch then gets too)")
    parser.add_argument("--against", metavar="CHECKOUT",
                        help="only compare the logistic epoch at q = 0.01 with another checkout of dpedu (e.g. "
                             "`git worktree add /tmp/before <commit>`): paired rounds, each a fresh process per tree")
    parser.add_argument("--rounds", type=int, default=8, help="paired rounds of --against (default 8)")
    parser.add_argument("--epoch-only", metavar="CHECKOUT", help=argparse.SUPPRESS)   # one --against process
    args = parser.parse_args(argv)
    if args.epoch_only is not None:
        return epoch_only(args.repeat)
    if args.against is not None:
        against = os.path.abspath(args.against)
        if not os.path.isfile(os.path.join(against, "dpedu", "__init__.py")):
            parser.error(f"--against: no dpedu checkout at {against} (its dpedu/__init__.py is missing)")
        if args.rounds < 1:
            parser.error(f"--rounds must be a positive integer; got {args.rounds}")
        return compare_checkouts(against, args.rounds, args.repeat)
    if args.threads is not None:
        if args.threads < 1:
            parser.error(f"--threads must be a positive integer; got {args.threads}")
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            parser.error("--threads needs threadpoolctl (pip install threadpoolctl)")
        threadpool_limits(limits=args.threads, user_api="blas")   # for the rest of the run

    X_train, y_train, X_test, y_test = load_adult()
    X = np.hstack([X_train, np.ones((len(X_train), 1))])
    n, d = X.shape
    v = np.random.default_rng(0).normal(size=d)
    sampler_table(n, max(args.repeat, 15))
    if args.samplers_only:
        return

    def bare_pass():
        u = X @ v
        return X.T @ u

    bare = best_time(bare_pass, 50)
    rows = [("bare pass X @ v, X.T @ u", "-", bare, None)]
    for q in (0.01, 0.05, 0.2, 1.0):  # the tuned defaults use 0.01 or 0.05 (dpedu.lab.estimator.TUNED_DEFAULTS)
        def epoch(q=q):
            return dp_sgd(X, y_train, noise_multiplier=Z, clip_norm=C, sampling_rate=q, epochs=1, rng=0)
        rows.append(("DP-SGD logistic regression", f"{q:g}", best_time(epoch, args.repeat), None))
        if q == 0.01:
            floor = lambda: handwritten_epoch(X, y_train, q)  # noqa: E731
            rows.append(("  the same epoch hand-written (the floor)", f"{q:g}", best_time(floor, args.repeat),
                         paired_ratio(epoch, floor, args.repeat)))
    for hidden in (16, 64):
        model = MLP(n_features=d, hidden_units=hidden)
        for q in (tuned_defaults(1.0).sampling_rate, 1.0):
            def epoch(q=q, model=model):
                return dp_sgd(X, y_train, noise_multiplier=Z, clip_norm=C, sampling_rate=q, epochs=1,
                              model=model, rng=0)
            rows.append((f"DP-SGD MLP, {hidden} tanh units ({model.n_params} params)", f"{q:g}",
                         best_time(epoch, args.repeat), None))
            if hidden == 16 and q < 1:
                floor = lambda q=q, model=model: handwritten_mlp_epoch(X, y_train, q, model)  # noqa: E731
                rows.append(("  the same epoch hand-written (the floor)", f"{q:g}", best_time(floor, args.repeat),
                             paired_ratio(epoch, floor, args.repeat)))

    print(f"One epoch of DP-SGD on Adult (n = {n}, d = {d} with the intercept column), best of {args.repeat}; "
          f"numpy {np.__version__}")
    width = max(len(name) for name, _, _, _ in rows)
    print(f"{'what':<{width}}  {'q':>5}  {'time/epoch':>11}  {'x bare pass':>11}  {'dpedu / floor (paired)':>22}")
    for name, q, seconds, ratio in rows:
        shown = "" if ratio is None else f"{ratio:22.2f}"
        print(f"{name:<{width}}  {q:>5}  {1e3 * seconds:8.2f} ms  {seconds / bare:11.1f}  {shown}")
    if not args.no_opacus:
        print()
        opacus_table(X, y_train, np.hstack([X_test, np.ones((len(X_test), 1))]), y_test, args.repeat)


def paired_ratio(dpedu_epoch, floor_epoch, rounds):
    """The median over ``rounds`` of (dpedu's epoch time / the floor's), the two timed back to back each round."""
    ratios = []
    for _ in range(rounds):
        ratios.append(best_time(dpedu_epoch, 1) / best_time(floor_epoch, 1))
    return float(np.median(ratios))


def handwritten_epoch(X, y, q, noise_multiplier=Z, clip_norm=C, learning_rate=LEARNING_RATE, seed=0):
    """The floor of a NumPy DP-SGD epoch of logistic regression: ``dp_sgd_step``'s arithmetic on Poisson batches
    drawn by their size, written out with nothing else (no argument checks, no batch sizes or inclusions
    recorded); one full-data loss at the end, as ``dp_sgd`` records one per epoch. The row norms are computed once,
    as a run does."""
    rng = np.random.default_rng(seed)
    n, d = X.shape
    row_norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    theta = np.zeros(d)
    for _ in range(max(1, round(1 / q))):
        B = np.sort(rng.choice(n, size=rng.binomial(n, q), replace=False))
        X_B, y_B = X.take(B, axis=0), y.take(B)
        sigmoids = 1.0 / (1.0 + np.exp(y_B * (X_B @ theta)))                 # sigma(-m_i)
        clipped_sum = -(X_B.T @ (y_B * np.minimum(sigmoids, clip_norm / row_norms.take(B))))
        theta = theta - learning_rate * (clipped_sum + rng.normal(0.0, noise_multiplier * clip_norm, size=d)) / (q * n)
    return theta, np.mean(np.logaddexp(0.0, -y * (X @ theta)))


def handwritten_mlp_epoch(X, y, q, model, noise_multiplier=Z, clip_norm=C, learning_rate=LEARNING_RATE, seed=0):
    """The floor of a NumPy DP-SGD epoch of the one-hidden-layer tanh network: forward, backward, the per-example
    gradient norms without the gradient matrix (Goodfellow 2015), the clip weights, the weighted backward pass and
    the noise, on Poisson batches drawn by their size; one full-data loss at the end. Nothing else."""
    rng = np.random.default_rng(seed)
    n, d = X.shape
    h = model.hidden_units
    row_norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    theta = model.init(rng)
    for _ in range(max(1, round(1 / q))):
        B = np.sort(rng.choice(n, size=rng.binomial(n, q), replace=False))
        X_B, y_B = X.take(B, axis=0), y.take(B)
        W1, b1, w2 = theta[: h * d].reshape(h, d), theta[h * d : h * d + h], theta[h * d + h : h * d + 2 * h]
        hidden = np.tanh(X_B @ W1.T + b1)
        scores = hidden @ w2 + theta[-1]
        r = -y_B / (1.0 + np.exp(y_B * scores))                               # d loss / d score
        delta = r[:, None] * w2 * (1.0 - hidden**2)
        norms = np.sqrt(np.einsum("ij,ij->i", delta, delta) * (row_norms.take(B) ** 2 + 1.0)
                        + r**2 * (np.einsum("ij,ij->i", hidden, hidden) + 1.0))
        weights = np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))
        wd, wr = weights[:, None] * delta, weights * r
        clipped_sum = np.concatenate([(wd.T @ X_B).ravel(), wd.sum(axis=0), wr @ hidden, [wr.sum()]])
        noise = rng.normal(0.0, noise_multiplier * clip_norm, size=theta.size)
        theta = theta - learning_rate * (clipped_sum + noise) / (q * n)
    W1, b1, w2 = theta[: h * d].reshape(h, d), theta[h * d : h * d + h], theta[h * d + h : h * d + 2 * h]
    return theta, np.mean(np.logaddexp(0.0, -y * (np.tanh(X @ W1.T + b1) @ w2 + theta[-1])))


def epoch_only(repeat):
    """One --against process: print the bare pass, the default logistic epoch at q = 0.01 and its floor, best of
    ``repeat``, in milliseconds, for the dpedu imported from the checkout named by ``DPEDU_BENCH_TREE``."""
    import dpedu

    tree = os.environ.get("DPEDU_BENCH_TREE")
    if tree and not os.path.abspath(dpedu.__file__).startswith(os.path.join(os.path.abspath(tree), "")):
        raise SystemExit(f"imported {dpedu.__file__}, not the dpedu of {tree}")
    X_train, y_train, _, _ = load_adult()
    X = np.hstack([X_train, np.ones((len(X_train), 1))])
    v = np.random.default_rng(0).normal(size=X.shape[1])
    default = best_time(lambda: dp_sgd(X, y_train, noise_multiplier=Z, clip_norm=C, sampling_rate=0.01, epochs=1,
                                       rng=0), repeat)
    bare = best_time(lambda: X.T @ (X @ v), 30)
    floor = best_time(lambda: handwritten_epoch(X, y_train, 0.01), repeat)
    print(f"{1e3 * bare:.4f} {1e3 * default:.4f} {1e3 * floor:.4f}")


def compare_checkouts(against, rounds, repeat):
    """The logistic epoch at q = 0.01 here and in the checkout ``against``, in alternating fresh processes (this
    script, run from each checkout's benchmarks/ folder, imports that checkout's dpedu); medians over the rounds."""
    import subprocess

    here = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
    times = {here: [], against: []}
    for _ in range(rounds):
        for tree in (against, here):
            out = subprocess.run([sys.executable, __file__, "--epoch-only", tree, "--repeat", str(repeat)],
                                 capture_output=True, text=True, check=True,
                                 env=dict(os.environ, DPEDU_BENCH_TREE=tree)).stdout
            times[tree].append([float(value) for value in out.split()])
    print(f"One epoch of DP-SGD logistic regression on Adult at q = 0.01 (dp_sgd's defaults): {rounds} paired rounds, "
          f"each a fresh process per checkout, best of {repeat} epochs; medians over the rounds (numpy {np.__version__})")
    print(f"{'checkout':<44}  {'bare pass':>9}  {'epoch':>9}  {'x bare':>6}  {'hand-written':>12}  {'epoch / floor':>13}")
    medians = {tree: np.median(np.array(times[tree]), axis=0) for tree in (against, here)}
    for tree in (against, here):
        bare, default, floor = medians[tree]
        print(f"{tree[-44:]:<44}  {bare:6.2f} ms  {default:6.1f} ms  {default / bare:6.1f}  {floor:9.1f} ms  "
              f"{default / floor:13.2f}")
    print(f"this checkout / the other: {medians[here][1] / medians[against][1]:.2f}")


def sampler_table(n, rounds, q=0.01, samples=100):
    """Print the time of ``samples`` Poisson samples at rate q from n records, three ways, side by side.

    Paired rounds: each round times the three forms back to back, so they see the same load; the ratio column is
    the median over rounds of each form's time over the two calls' time in that round (robust to a disturbed
    round), the time column the best round.
    """
    rng = np.random.default_rng(0)

    def two_calls():
        for _ in range(samples):
            rng.choice(n, size=rng.binomial(n, q), replace=False)

    def by_size():
        for _ in range(samples):
            poisson_sample(n, q, rng)

    names = ("rng.binomial + rng.choice alone", "poisson_sample (checked at the door, sorted)")
    times = np.array([[best_time(fn, 1) for fn in (two_calls, by_size)] for _ in range(rounds)])
    ratios = np.median(times / times[:, :1], axis=0)
    print(f"{samples} Poisson samples at q = {q:g} from n = {n:,} ({rounds} paired rounds; numpy {np.__version__})")
    width = max(len(name) for name in names)
    print(f"{'sampler':<{width}}  {'best time':>9}  {'x the two calls (median)':>24}")
    for name, seconds, ratio in zip(names, times.min(axis=0), ratios):
        print(f"{name:<{width}}  {1e3 * seconds:6.2f} ms  {ratio:24.2f}")
    print()


# --- Opacus beside dpedu (benchmark-only: runs when torch and opacus import) ------------------------------------



def blas_threads():
    """The number of threads numpy's BLAS uses, and how it was found (threadpoolctl, else the CPU count)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return os.cpu_count() or 1, "the CPU count (threadpoolctl not installed)"
    blas = [info for info in threadpool_info() if info["user_api"] == "blas"]
    mine = [info for info in blas if "numpy" in info["filepath"]] or blas
    if not mine:
        return os.cpu_count() or 1, "the CPU count (threadpoolctl found no BLAS)"
    return mine[0]["num_threads"], f"threadpoolctl: {mine[0]['internal_api']}"


def opacus_epoch(X, y, hidden, q, dtype):
    """Opacus's DP-SGD on (X, y), made private once; returns (one epoch, test accuracy of the current model).

    ``hidden=None``: logistic regression ``Linear(d, 1, bias=False)`` from zero; else ``Linear(d, hidden)``, tanh,
    ``Linear(hidden, 1)`` with dpedu's MLP initialisation (W ~ N(0, 1/fan-in), biases 0). Labels {-1, 1} -> {0, 1}.
    """
    torch.manual_seed(0)
    n, d = X.shape
    if hidden is None:
        net = torch.nn.Linear(d, 1, bias=False)
        torch.nn.init.zeros_(net.weight)
    else:
        net = torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 1))
        for layer, fan_in in ((net[0], d), (net[2], hidden)):
            torch.nn.init.normal_(layer.weight, 0.0, fan_in ** -0.5)
            torch.nn.init.zeros_(layer.bias)
    net = net.to(dtype)
    features, labels = torch.as_tensor(X, dtype=dtype), torch.as_tensor((y + 1) / 2, dtype=dtype)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(features, labels), batch_size=round(q * n))
    optimizer = torch.optim.SGD(net.parameters(), lr=LEARNING_RATE)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Secure RNG turned off")
        module, optimizer, loader = opacus.PrivacyEngine().make_private(
            module=net, optimizer=optimizer, data_loader=loader, noise_multiplier=Z, max_grad_norm=C,
            poisson_sampling=True)
    loss_fn = torch.nn.BCEWithLogitsLoss()       # on labels in {0, 1}: the mean logistic loss

    def epoch():
        with warnings.catch_warnings():          # the inputs need no gradient; Opacus's hooks say so each step
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            for xb, yb in loader:                # Poisson batches at rate 1 / len(loader) = q
                optimizer.zero_grad()
                loss_fn(module(xb).squeeze(-1), yb).backward()
                optimizer.step()                 # clip each per-example gradient, add noise, / int(q n), step
        with torch.no_grad():                    # the full-data loss that ends each dp_sgd epoch
            return float(loss_fn(module(features).squeeze(-1), labels))

    def accuracy(X_test, y_test):
        with torch.no_grad():
            scores = module(torch.as_tensor(X_test, dtype=dtype)).squeeze(-1).numpy()
        return float(np.mean(np.where(scores >= 0, 1.0, -1.0) == y_test))

    return epoch, accuracy


def opacus_table(X, y, X_test, y_test, repeat):
    """Print one epoch of Opacus beside dpedu's, in paired rounds, with the ratio and a test-accuracy sanity check."""
    if opacus is None:
        print(OPACUS_MISSING)
        return
    threads, how = blas_threads()
    torch.set_num_threads(threads)
    n, d = X.shape
    q = tuned_defaults(1.0).sampling_rate        # the MLP rows' rate above; logistic regression's first row
    epochs = 1 + repeat
    print(f"Opacus {opacus.__version__} beside dpedu: one DP-SGD epoch at q = {q:g}, z = {Z:g}, C = {C:g}, "
          f"learning rate {LEARNING_RATE:g}; best of {repeat} paired rounds after one warm-up epoch each")
    print(f"torch {torch.__version__} on the CPU, {threads} thread{'s' * (threads != 1)} as numpy's BLAS ({how})")
    rows = []
    for name, hidden in (("logistic regression", None), ("MLP, 16 tanh units", 16)):
        model = LogisticModel(d) if hidden is None else MLP(n_features=d, hidden_units=hidden)
        trained = dp_sgd(X, y, noise_multiplier=Z, clip_norm=C, sampling_rate=q, epochs=epochs, model=model,
                         learning_rate=LEARNING_RATE, rng=0)
        dpedu_accuracy = float(np.mean(model.predict(trained.theta, X_test) == y_test))

        def dpedu_run(seed=0, model=model):
            return dp_sgd(X, y, noise_multiplier=Z, clip_norm=C, sampling_rate=q, epochs=1, model=model,
                          learning_rate=LEARNING_RATE, rng=seed)

        for dtype in (torch.float64, torch.float32):
            opacus_run, opacus_accuracy = opacus_epoch(X, y, hidden, q, dtype)
            dpedu_run(), opacus_run()            # warm-up
            times = np.array([[best_time(lambda: dpedu_run(r + 1), 1), best_time(opacus_run, 1)]
                              for r in range(repeat)])
            best = times.min(axis=0)
            rows.append((name, str(dtype).removeprefix("torch."), *best, dpedu_accuracy,
                         opacus_accuracy(X_test, y_test)))
    width = max(len(row[0]) for row in rows)
    print(f"{'what':<{width}}  {'dtype':>7}  {'dpedu':>10}  {'Opacus':>10}  {'Opacus/dpedu':>12}  "
          f"{'test acc. dpedu, Opacus':>23}")
    for name, dtype, dpedu_s, opacus_s, dpedu_acc, opacus_acc in rows:
        print(f"{name:<{width}}  {dtype:>7}  {1e3 * dpedu_s:7.1f} ms  {1e3 * opacus_s:7.1f} ms  "
              f"{opacus_s / dpedu_s:12.1f}  {dpedu_acc:16.3f}, {opacus_acc:.3f}")
    print(f"test accuracy after {epochs} epochs each (n = {n:,} training rows, {len(X_test):,} test rows): a sanity "
          f"check that Opacus trains, not an accuracy claim")


if __name__ == "__main__":
    main()
