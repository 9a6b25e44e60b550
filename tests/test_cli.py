"""The command line (dpedu.cli): user errors are one line on stderr with exit status 1, naming the option."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dpedu import cli, datasets
from dpedu.cli.common import MAX_STEPS, Progress

ROOT = Path(__file__).resolve().parents[1]


def _fails_with(capsys, argv, *fragments):
    status = cli.main(argv)
    out, err = capsys.readouterr()
    assert status == 1, (status, out, err)
    lines = err.strip().splitlines()           # progress lines may come first; the error is one line, the last
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], err
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    assert "Traceback" not in err
    return errors[0]


def test_missing_output_folder_is_one_line(capsys):
    _fails_with(capsys, ["figure2", "--out", "/nonexistent/f.png"], "--out", "/nonexistent/f.png")


def test_os_error_while_writing_is_one_line(capsys, tmp_path):
    """An OSError at the very end (here: --out is a folder) is still one line, with the file name."""
    folder = tmp_path / "f.png"
    folder.mkdir()
    _fails_with(capsys, ["figure2", "--out", str(folder), "--max-epochs", "2", "--points", "1"], str(folder))


@pytest.mark.parametrize("command", ["demo", "tradeoff", "race"])
def test_adult_data_missing_is_one_clear_line(capsys, monkeypatch, command):
    def missing(*args, **kwargs):
        raise datasets.AdultDataError("the Adult files were not found\n  searched: /a, /b\n  set DPEDU_DATA")

    monkeypatch.setattr(datasets, "load_adult", missing)
    _fails_with(capsys, [command], "the Adult files were not found", "set DPEDU_DATA")


@pytest.mark.parametrize("argv, option", [
    (["audit", "--clip-norm", "0", "--runs", "4"], "--clip-norm must be"),
    (["audit", "--seed", "-1", "--runs", "4"], "--seed must be"),
    (["audit", "--runs", "4", "--noise-multiplier", "-1"], "--noise-multiplier must be"),
    (["audit", "--runs", "4", "--sampling-rate", "2"], "--sampling-rate must be"),
    (["epsilon", "-z", "-4", "-q", "0.01", "--steps", "10"], "--noise-multiplier must be"),
    (["epsilon", "-z", "4", "-q", "0.01", "--epochs", "1", "--delta", "2"], "--delta must be"),
    (["tradeoff", "--clip-norm", "-1"], "--clip-norm must be"),
    (["tradeoff", "--n-jobs", "0"], "--n-jobs must be"),
    (["audit", "--runs", "4", "--n-jobs", "0"], "--n-jobs must be"),
    (["plan", "--epsilon", "0.5", "--dataset-size", "1"], "--dataset-size must be"),
])
def test_option_errors_name_the_option(capsys, argv, option):
    line = _fails_with(capsys, argv, option)
    assert "noise_multiplier" not in line and "sampling_rate" not in line


def test_absurd_sizes_are_refused_quickly(capsys):
    start = time.perf_counter()
    line = _fails_with(capsys, ["epsilon", "-z", "4", "-q", "0.01", "--epochs", "1e300"], "--epochs",
                       f"{MAX_STEPS:,}")
    assert time.perf_counter() - start < 5 and len(line) < 200
    _fails_with(capsys, ["epsilon", "-z", "4", "-q", "0.01", "--steps", str(MAX_STEPS + 1)], "--steps")
    _fails_with(capsys, ["figure2", "--max-epochs", "1e300"], "--max-epochs")
    _fails_with(capsys, ["tradeoff", "--epochs", "1e300"], "--epochs")


def test_tradeoff_numbers_do_not_depend_on_n_jobs(capsys, monkeypatch, tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 4)) / 2
    y = np.where(X @ np.array([1.0, -1.0, 0.5, 0.0]) + 0.1 * rng.normal(size=200) > 0, 1.0, -1.0)
    monkeypatch.setattr(datasets, "load_adult", lambda *args, **kwargs: (X, y, X, y))
    tables = []
    for n_jobs in ("1", "2"):
        csv = tmp_path / f"t{n_jobs}.csv"
        argv = ["tradeoff", "--epsilons", "0.5,4", "--seeds", "2", "--epochs", "2", "--sampling-rate", "0.1",
                "--n-jobs", n_jobs, "--out", str(tmp_path / f"t{n_jobs}.png"), "--csv", str(csv)]
        assert cli.main(argv) == 0
        tables.append(csv.read_text())
    capsys.readouterr()
    assert tables[0] == tables[1] and tables[0].count("\n") >= 5       # header and 2 x 2 runs, equal to the bit


def test_debug_shows_the_traceback():
    with pytest.raises(ValueError, match="at most"):
        cli.main(["--debug", "epsilon", "-z", "4", "-q", "0.01", "--epochs", "1e300"])


def test_user_message_maps_internal_names_only_where_they_name_the_argument():
    options = {"noise_multiplier": "--noise-multiplier", "delta": "--delta"}
    assert cli.user_message(ValueError("noise_multiplier must be >= 0; got -1"), options) == \
        "--noise-multiplier must be >= 0; got -1"
    assert cli.user_message(ValueError("N must be >= 2 (delta = 1/N must be < 1)"), options) == \
        "N must be >= 2 (delta = 1/N must be < 1)"
    assert cli.user_message(FileNotFoundError(2, "No such file or directory", "/x/y.png")) == \
        "No such file or directory: /x/y.png"


def test_python_m_dpedu_still_works():
    result = subprocess.run([sys.executable, "-m", "dpedu", "epsilon", "-z", "4", "-q", "0.01", "--steps", "100",
                             "--accountants", "rdp"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "T = 100 steps" in result.stdout
    bad = subprocess.run([sys.executable, "-m", "dpedu", "figure2", "--out", "/nonexistent/f.png"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_progress_is_lines_off_a_terminal_and_a_bar_on_one(capsys, monkeypatch):
    progress = Progress()
    progress("[1/3] epsilon = 0.5, seed 1/3")
    assert capsys.readouterr().err == "[1/3] epsilon = 0.5, seed 1/3\n"
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    for done in (1, 2, 3):
        progress(f"[{done}/3] epsilon = 0.5, seed {done}/3")
    err = capsys.readouterr().err
    assert "3/3" in err and "[1/3] epsilon" not in err          # a tqdm bar, not the raw lines
    assert progress._bar is None                                # closed at its total


def _small_adult(monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 4)) / 2
    y = np.where(X @ np.array([1.0, -1.0, 0.5, 0.0]) + 0.1 * rng.normal(size=200) > 0, 1.0, -1.0)
    monkeypatch.setattr(datasets, "load_adult", lambda *args, **kwargs: (X, y, X, y))


def test_tradeoff_sampling_and_relation(capsys, monkeypatch, tmp_path):
    _small_adult(monkeypatch)
    argv = ["tradeoff", "--epsilons", "4", "--seeds", "1", "--epochs", "1", "--sampling-rate", "0.1",
            "--sampling", "fixed", "--relation", "replace_one", "--out", str(tmp_path / "t.png"),
            "--csv", str(tmp_path / "t.csv")]
    assert cli.main(argv) == 0
    assert "fixed sampling, replace/one neighbours" in capsys.readouterr().out


def test_tradeoff_refuses_a_pair_the_accountant_does_not_cover(capsys, monkeypatch, tmp_path):
    _small_adult(monkeypatch)
    line = _fails_with(capsys, ["tradeoff", "--epsilons", "4", "--seeds", "1", "--epochs", "1", "--relation",
                                "replace_one", "--out", str(tmp_path / "t.png"), "--csv", str(tmp_path / "t.csv")],
                       "'rdp' accountant cannot account for SubsampledGaussianEvent")
    assert "replace_one" in line


# -- every option checked before any work, in the words of the command line ----------------------------------------

def _no_adult(monkeypatch):
    """load_adult fails the test if called: the command must refuse its options before loading anything."""
    def load(*args, **kwargs):
        raise AssertionError("Adult was loaded before the options were checked")

    monkeypatch.setattr(datasets, "load_adult", load)


@pytest.mark.parametrize("argv, message", [
    (["tradeoff", "--epsilons", "-1"], "error: --epsilons must be positive numbers; got -1"),
    (["tradeoff", "--epsilons", "0.5,0,inf"], "error: --epsilons must be positive numbers; got 0, inf"),
    (["tradeoff", "--seeds", "0"], "error: --seeds must be an integer >= 1; got 0"),
    (["tradeoff", "--delta", "1"], "error: --delta must be in (0, 1); got 1.0"),
    (["tradeoff", "--accountant", "rpd"], "error: --accountant: accountant must be one of "
     "'sequential', 'advanced', 'strong', 'moments', 'rdp', 'zcdp', 'pld'; got 'rpd'"),
    (["tradeoff", "--learning-rate", "-2"], "error: --learning-rate must be a finite positive number"),
    (["tradeoff", "--sampling-rate", "0"], "error: --sampling-rate must be in (0, 1]"),
    (["demo", "--epsilon", "-1"], "error: --epsilon must be a finite positive number; got -1.0"),
    (["demo", "--iterations", "0"], "error: --iterations must be an integer >= 1; got 0"),
    (["demo", "--delta", "0"], "error: --delta must be in (0, 1); got 0.0"),
])
def test_training_commands_refuse_options_before_loading_adult(capsys, monkeypatch, argv, message):
    _no_adult(monkeypatch)
    line = _fails_with(capsys, argv)
    assert line.startswith(message), line
    assert "array" not in line


@pytest.mark.parametrize("argv, message", [
    (["audit", "--mode", "one-run", "--epsilon", "-8"], "error: --epsilon must be a finite positive number"),
    (["audit", "--mode", "one-run", "--canaries", "0"], "error: --canaries must be an integer >= 1; got 0"),
    (["audit", "--mode", "one-run", "--delta", "0"], "error: --delta must be in (0, 1)"),
    (["audit", "--confidence", "1"], "error: --confidence must be in (0, 1)"),
    (["audit", "--steps", "0"], "error: --steps must be an integer >= 1; got 0"),
])
def test_audit_refuses_options_before_any_training(capsys, monkeypatch, argv, message):
    _no_adult(monkeypatch)
    line = _fails_with(capsys, argv)
    assert line.startswith(message), line


@pytest.mark.parametrize("argv, message", [
    (["plan", "--epsilon", "-0.5"], "error: --epsilon must be a finite positive number; got -0.5"),
    (["plan", "--epsilon", "0.5", "--epochs", "0"], "error: --epochs must be an integer >= 1; got 0"),
    (["plan", "--epsilon", "0.5", "--steps", "0"], "error: --steps must be an integer >= 1; got 0"),
    (["plan", "--epsilon", "0.5", "--delta", "2"], "error: --delta must be in (0, 1); got 2.0"),
    (["plan", "--epsilon", "0.5", "--accountants", "rdp,xx"], "error: --accountants: accountant must be one of "
     "'sequential', 'advanced', 'strong', 'moments', 'rdp', 'zcdp', 'pld'; got 'xx'"),
])
def test_plan_refuses_its_options_before_printing_anything(capsys, argv, message):
    status = cli.main(argv)
    out, err = capsys.readouterr()
    assert status == 1 and out == ""
    assert err.startswith(message) and err.count("\n") == 1, err      # no "planning ..." line before it


@pytest.mark.parametrize("typo, suggestion", [("dmeo", "'demo'"), ("plann", "'plan'"),
                                              ("strip-solution", "'strip-solutions'"), ("audti", "'audit'")])
def test_a_mistyped_command_gets_a_did_you_mean(capsys, typo, suggestion):
    with pytest.raises(SystemExit) as exited:
        cli.main([typo])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"unknown command {typo!r}; did you mean {suggestion}?" in err, err


def test_an_unknown_command_far_from_any_lists_them(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--debug", "frobnicate"])
    err = capsys.readouterr().err
    assert "unknown command 'frobnicate' (commands: demo, " in err and "did you mean" not in err


def test_strip_solutions_refusal_speaks_in_options(capsys, tmp_path):
    """The CLI says --force (not force=True); the Python API says force=True (not --force)."""
    from dpedu.course.exercises import make_student_copies

    chapter = ROOT / "chapters" / "01_logistic_regression.ipynb"
    out = tmp_path / "student"
    assert cli.main(["strip-solutions", str(chapter), str(out)]) == 0
    copy = out / chapter.name
    copy.write_text(copy.read_text() + " ")                     # the student edited it
    line = _fails_with(capsys, ["strip-solutions", str(chapter), str(out)], "--force")
    assert "force=True" not in line
    with pytest.raises(FileExistsError, match="force=True") as refused:
        make_student_copies(chapter, out)
    assert "--force" not in str(refused.value), "the Python API names its own argument, force=True"
    assert cli.main(["strip-solutions", str(chapter), str(out), "--force"]) == 0


def test_demo_says_which_delta_each_epsilon_is_at(capsys, monkeypatch):
    """The book's (1.1, 1e-4) and the accountants' table are at the same total delta, and the sequential row's
    difference from the book's sum is explained."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4)) / 2
    y = np.where(X @ np.array([1.0, -1.0, 0.5, 0.0]) > 0, 1.0, -1.0)
    monkeypatch.setattr(datasets, "load_adult", lambda *args, **kwargs: (X, y, X, y))
    assert cli.main(["demo", "--seeds", "2"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "eps=1.1, delta=0.0001 (the book's sum, below)" in out
    assert "10 x 0.1 + 0.1 = 1.1 at delta 10 x 1e-05 = 0.0001" in out
    assert "accountant epsilon (delta=0.0001)" in out                   # not the per-step 1e-05
    sequential = float(out.split("accountant epsilon (delta=0.0001) sequential ")[1].split()[0])
    assert f"classic calibration guarantees: {sequential:.4f} < 1.1" in out


def test_statement_sampling_and_relation(capsys):
    """--sampling/--relation: the statement of that run; uncovered pairs and a missing --n are refused first."""
    base = ["statement", "-z", "1", "-q", "0.1", "--steps", "20", "--delta", "1e-4"]
    assert cli.main([*base, "--relation", "replace_one"]) == 0
    out = capsys.readouterr().out
    assert "replace one example" in out and "PLD accountant" in out and "Poisson samples" in out
    assert cli.main([*base, "--n", "200", "--sampling", "fixed", "--relation", "replace_one"]) == 0
    out = capsys.readouterr().out
    assert "RDP accountant" in out and "m = 20" in out and "drawn afresh each step" in out
    _fails_with(capsys, [*base, "--n", "200", "--sampling", "fixed"], "--sampling fixed", "--relation add_remove",
                "covered")
    _fails_with(capsys, [*base, "--sampling", "fixed", "--relation", "replace_one"], "--n")
    _fails_with(capsys, [*base, "--n", "2", "--sampling", "fixed", "--relation", "replace_one"], "m = round(q n)")


def test_demo_reports_the_one_non_private_baseline(capsys, monkeypatch):
    """demo's ceiling is dpedu.lab.experiments.non_private_accuracy, the function tradeoff and the chapters use."""
    from dpedu.lab import experiments

    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4)) / 2
    y = np.where(X @ np.array([1.0, -1.0, 0.5, 0.0]) > 0, 1.0, -1.0)
    monkeypatch.setattr(datasets, "load_adult", lambda *args, **kwargs: (X, y, X, y))
    calls = []
    monkeypatch.setattr(experiments, "non_private_accuracy", lambda data: calls.append(data) or 0.4242)
    assert cli.main(["demo", "--seeds", "1"]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if "scikit-learn LogisticRegression" in l)
    assert "42.42%" in line and len(calls) == 1, line


def _small_adult(monkeypatch, n=240, d=5):
    """Adult's shape in miniature: rows of norm at most sqrt(14), labels in {-1, +1}."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(n, d))
    X *= np.minimum(1.0, 3.5 / np.linalg.norm(X, axis=1, keepdims=True))
    y = np.where(X @ np.linspace(1.0, -1.0, d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    monkeypatch.setattr(datasets, "load_adult", lambda *args, **kwargs: (X, y, X[:120], y[:120]))
    return X, y


def test_race_prints_chapter_11s_table_with_progress(capsys, monkeypatch, tmp_path):
    """`python -m dpedu race` is compare_learners at the verdict's settings: the same numbers, its table, a CSV row
    per selection, a chart, and progress on stderr."""
    from dpedu.lab.experiments.learners import LEARNER_SPECS, compare_learners

    X, y = _small_adult(monkeypatch)
    argv = ["race", "--seeds", "2", "--epsilons", "1,4", "--learners", "noisy_gd,output_perturbation",
            "--rows", "200", "--out", str(tmp_path / "race.png"), "--csv", str(tmp_path / "race.csv")]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    direct = compare_learners((X[:200], y[:200], X[:120], y[:120]), [1.0, 4.0], seeds=2,
                              learners=("noisy_gd", "output_perturbation"), rng=0)
    assert direct.table() in out
    assert "200 training rows" in out and "best at each epsilon" in out
    assert all(LEARNER_SPECS[name].name in out for name in ("noisy_gd", "output_perturbation"))
    assert "selections: 8/8" in err                  # the progress messages (a tqdm bar on a terminal)
    assert (tmp_path / "race.csv").read_text().count("\n") == 1 + 2 * 2 * 2
    assert (tmp_path / "race.png").stat().st_size > 1000


def test_race_leaders_name_the_learners_its_seeds_cannot_separate():
    from dpedu.lab.experiments.learners import LearnersComparison

    accuracies = np.array([[[0.80, 0.82]], [[0.815, 0.815]], [[0.70, 0.70]]])   # 3 learners, 1 epsilon, 2 seeds
    race = LearnersComparison(("noisy_gd", "dp_sgd", "output_perturbation"), np.array([0.1]), 1e-5, accuracies,
                              np.zeros((3, 1, 2), dtype=int), np.array([[0.1], [0.1], [0.1]]), 0.85)
    assert race.leaders() == [("dp_sgd", ("noisy_gd",))]
    assert "0.1: DP-SGD (noisy GD within the spread)" in race.table()


@pytest.mark.parametrize("argv, option", [
    (["race", "--learners", "dp_sgd,nope"], "--learners must be"),
    (["race", "--seeds", "0"], "--seeds must be"),
    (["race", "--epsilons", "0.1,-1"], "--epsilons must be"),
    (["race", "--rows", "0"], "--rows must be"),
    (["race", "--rows", "100000"], "--rows must be at most"),
    (["race", "--n-jobs", "0"], "--n-jobs must be"),
])
def test_race_errors_name_the_option(capsys, monkeypatch, argv, option):
    _small_adult(monkeypatch)
    _fails_with(capsys, argv, option)
