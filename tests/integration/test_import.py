"""Importing the package is quiet: what TensorFlow logs comes from the user's code."""

import os
import subprocess
import sys


def test_importing_the_package_logs_no_tensorflow_warning():
    result = subprocess.run(
        [sys.executable, "-c", "import keras_estimator"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "WARNING:tensorflow" not in result.stderr, result.stderr[-3000:]
    assert "deprecated" not in result.stderr, result.stderr[-3000:]


def _modules_loaded_by(code):
    result = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return set(eval(result.stdout.strip().splitlines()[-1]))


def test_importing_the_package_imports_neither_tensorflow_nor_keras():
    loaded = _modules_loaded_by("import keras_estimator")
    assert "tensorflow" not in loaded
    assert "keras" not in loaded


def test_first_use_of_a_name_loads_it_and_stores_it_on_the_package():
    loaded = _modules_loaded_by(
        "import keras_estimator as ke\n"
        "estimator = ke.Estimator\n"
        "assert vars(ke)['Estimator'] is estimator\n"
        "assert ke.feature_column.DenseFeatures is not None\n"
        "from keras_estimator import RunConfig\n"
    )
    assert "tensorflow" in loaded


def test_first_use_checks_the_keras_backend():
    result = subprocess.run(
        [sys.executable, "-c", "import keras_estimator as ke; ke.Estimator"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KERAS_BACKEND": "jax"},
    )
    assert result.returncode != 0
    assert "KERAS_BACKEND is 'jax'" in result.stderr
