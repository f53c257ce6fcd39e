"""TF1's disable_eager_execution / disable_v2_behavior in Estimator programs."""

import subprocess
import sys
import textwrap

import tensorflow as tf

import keras_estimator as ke

_TRAIN = """
import numpy as np
from tests._models import input_fn, make_data, mlp_model_fn
x, y = make_data()
est = tf.estimator.Estimator(mlp_model_fn, params={"optimizer": "sgd"})
est.train(input_fn(x, y), steps=5)
print("STEP", est.evaluate(input_fn(x, y, repeat=False))["global_step"])
"""


def _run(code, then=""):
    """Runs `code`, then the code `then`, in a fresh process."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code) + then],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=str(__import__("pathlib").Path(__file__).parents[2]),
    )


def test_without_install_the_estimator_names_the_call_to_remove():
    result = _run(
        """
        import tensorflow as tf
        import keras_estimator as ke
        tf.compat.v1.disable_eager_execution()
        try:
            ke.Estimator(lambda features: None)
        except ValueError as error:
            print("ERROR", error)
        """
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "ERROR Eager execution is disabled" in result.stdout
    assert "tf.compat.v1.disable_eager_execution()" in result.stdout
    assert "keras_estimator.install()" in result.stdout


def test_under_install_the_switches_warn_once_and_training_runs():
    result = _run(
        """
        import warnings
        import keras_estimator
        keras_estimator.install()
        import tensorflow.compat.v1 as tf
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tf.disable_v2_behavior()
            tf.disable_v2_behavior()
            tf.disable_eager_execution()
        print("WARNINGS", sum("keeps eager execution" in str(w.message) for w in caught))
        print("EAGER", tf.executing_eagerly())
        """,
        then=_TRAIN,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    # One warning per switch, however often it is called.
    assert "WARNINGS 2" in result.stdout
    assert "EAGER True" in result.stdout
    assert "STEP 5" in result.stdout


def test_uninstall_restores_the_switches():
    originals = {name: getattr(tf.compat.v1, name) for name in ("disable_eager_execution", "disable_v2_behavior")}
    with ke.install():
        assert tf.compat.v1.disable_eager_execution is not originals["disable_eager_execution"]
    for name, original in originals.items():
        assert getattr(tf.compat.v1, name) is original
