"""Importing the package is quiet: what TensorFlow logs comes from the user's code."""

import json
import os
import subprocess
import sys

import pytest


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


def test_compat_layers_does_not_import_the_v1_estimator_namespace():
    # The v1 namespace (premade estimators, TPUEstimator, inputs) took three
    # quarters of a program's first use of the package with it.
    loaded = _modules_loaded_by(
        "import keras_estimator as ke\n"
        "assert ke.compat.layers.dense is ke.compat.layers.dense\n"
        "assert 'layers' in dir(ke.compat) and 'estimator' in dir(ke.compat)\n"
    )
    assert "keras_estimator.compat.layers" in loaded
    assert "keras_estimator.compat.estimator" not in loaded
    assert "keras_estimator._src.canned.boosted_trees" not in loaded
    loaded = _modules_loaded_by(
        "import keras_estimator as ke\n"
        "from keras_estimator.compat import estimator\n"
        "assert ke.compat.estimator is estimator\n"
        "assert estimator.experimental.KMeans is not None\n"
    )
    assert "keras_estimator.compat.estimator" in loaded


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_import_refuses_the_backend_keras_reads_from_its_config(tmp_path, backend):
    # No KERAS_BACKEND: keras.json names the backend. The refusal comes before
    # Keras is imported (which fails on its own for a backend not installed).
    (tmp_path / "keras.json").write_text(json.dumps({"backend": backend}))
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    env["KERAS_HOME"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", "import keras_estimator as ke\nprint('imported')\nke.Estimator"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode != 0
    assert "imported" not in result.stdout
    assert f"KERAS_BACKEND is {backend!r}" in result.stderr
    assert "ModuleNotFoundError" not in result.stderr
