"""The installed `keras-estimator` script and `python -m`, in their own processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "programs"
TIMEOUT_S = 300


def _env(tmp_path):
    env = dict(os.environ)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env["TMPDIR"] = str(tmp_path)  # the program's tempfile.mkdtemp() model_dir
    env["PYTHONHASHSEED"] = "0"
    return env


def _console_script():
    script = Path(sys.executable).parent / "keras-estimator"
    if script.exists():
        return [str(script)]
    found = shutil.which("keras-estimator")
    if found is None:
        pytest.skip("keras-estimator is not installed (pip install -e .)")
    return [found]


def test_console_script_runs_an_unmodified_215_program(tmp_path):
    # tests/programs/numpy_input_fn.py, exactly as tf.estimator 2.15 ran it.
    completed = subprocess.run(
        [*_console_script(), "run", str(PROGRAMS / "numpy_input_fn.py")],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    (line,) = [x for x in completed.stdout.splitlines() if x.startswith("RESULT ")]
    result = json.loads(line[len("RESULT ") :])
    assert result["global_step"] == 100
    assert result["num_predictions"] == 40
    assert result["accuracy"] >= 0.9


def test_python_m_propagates_the_exit_status(tmp_path):
    script = tmp_path / "stop.py"
    script.write_text(
        "import sys, tensorflow as tf\n"
        "assert tf.estimator.Estimator.__module__.startswith('keras_estimator.')\n"
        "print('ARGV', sys.argv[1:])\n"
        "sys.exit(int(sys.argv[1]))\n"
    )
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "keras_estimator",
            "run",
            str(script),
            "4",
        ],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert completed.returncode == 4, completed.stderr[-3000:]
    assert "ARGV ['4']" in completed.stdout


_NO_TENSORFLOW = """
import sys
from keras_estimator._src.cli.main import main
status = main(sys.argv[1:])
heavy = sorted(m for m in ("tensorflow", "keras") if m in sys.modules)
print("loaded:", heavy, file=sys.stderr)
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["run", "--help"],
        ["check", str(ROOT / "tests" / "cli" / "programs" / "check_differs.py")],
        ["check", "--json", str(ROOT / "tests" / "cli" / "programs")],
    ],
)
def test_help_and_check_start_without_tensorflow(argv, tmp_path):
    """--help and check read arguments and sources only: no TensorFlow start-up."""
    result = subprocess.run(
        [sys.executable, "-c", _NO_TENSORFLOW, *argv],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=_env(tmp_path),
    )
    assert "loaded: []" in result.stderr, result.stderr[-3000:]
    assert result.stdout.strip(), "the command printed nothing"
