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
