"""Zero-change mode: `install()` / `uninstall()` and `numpy_input_fn`.

The end-to-end case runs `tests/data/tf215_iris_script.py`, a tf.estimator
2.15 program, unmodified in a fresh process after `keras_estimator.install()`.
"""

import importlib
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator
from keras_estimator import compat
from keras_estimator._src.zero_change.install import TRAIN_NAMES
from keras_estimator.compat.estimator.inputs import numpy_input_fn

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tests" / "data" / "tf215_iris_script.py"
IRIS_CSV = REPO / "keras_estimator" / "data" / "iris.csv"

# Test accuracies (30 flowers) of tests/data/tf215_iris_script.py run with
# TensorFlow 2.15.1 + tensorflow-estimator 2.15.0 (python 3.11, this machine),
# 31 runs. 2.15 is not deterministic here: numpy_input_fn's queue starts each
# shuffled epoch at a row drawn from Python's generator after reseeding it
# from the OS, and the legacy layers then draw initial weights from it.
TF215_ACCURACIES = [0.9] * 6 + [0.9333] * 10 + [0.9667] * 11 + [1.0] * 4
TF215_MEDIAN = statistics.median(TF215_ACCURACIES)  # 0.9333; mean 0.947
# One flower of 30 below 2.15's median, i.e. 2.15's lowest run. The two
# implementations cannot follow one trajectory (different random streams for
# initial weights and shuffling); 2.15's own runs spread one to two flowers
# either side of its median, and ours (0.9667 with the script's seed 42; 0.90
# to 1.00 over seeds 1-8) spread as much.
TOLERANCE = 1 / 30
ACCURACY_BAR = TF215_MEDIAN - TOLERANCE


# ---------------------------------------------------------------- numpy_input_fn


def _batches(input_fn, limit=None, **kwargs):
    """The dataset's elements as numpy structures (at most `limit`)."""
    dataset = input_fn(**kwargs)
    if limit is not None:
        dataset = dataset.take(limit)
    return [tf.nest.map_structure(lambda t: t.numpy(), e) for e in dataset]


def test_batches_cross_epochs_and_keep_the_last_partial_batch():
    x = {"b": np.arange(5, dtype=np.float64), "a": np.arange(5, dtype=np.int32)}
    y = np.arange(5) * 10
    input_fn = numpy_input_fn(x, y, batch_size=3, num_epochs=2, shuffle=False)
    batches = _batches(input_fn)
    assert [len(labels) for _, labels in batches] == [3, 3, 3, 1]
    rows = np.concatenate([features["a"] for features, _ in batches])
    np.testing.assert_array_equal(rows, [0, 1, 2, 3, 4, 0, 1, 2, 3, 4])
    labels = np.concatenate([labels for _, labels in batches])
    np.testing.assert_array_equal(labels, rows * 10)
    features = batches[0][0]
    assert list(features) == ["a", "b"]  # sorted, as 2.15 returned them
    assert features["a"].dtype == np.int32 and features["b"].dtype == np.float64


def test_num_epochs_none_repeats_forever_with_full_batches():
    input_fn = numpy_input_fn(
        np.arange(6).reshape(3, 2),
        np.arange(3),
        batch_size=2,
        num_epochs=None,
        shuffle=False,
    )
    dataset = input_fn()
    assert dataset.element_spec[0].shape.as_list() == [2, 2]  # static batch size
    batches = _batches(input_fn, limit=7)
    assert len(batches) == 7
    labels = np.concatenate([labels for _, labels in batches])
    np.testing.assert_array_equal(labels, [0, 1, 2] * 4 + [0, 1])


def test_features_only_and_dict_labels():
    features_only = _batches(
        numpy_input_fn({"x": np.arange(4.0)}, batch_size=4, shuffle=False)
    )
    assert len(features_only) == 1 and isinstance(features_only[0], dict)
    np.testing.assert_array_equal(features_only[0]["x"], np.arange(4.0))

    single_array = _batches(numpy_input_fn(np.arange(3.0), batch_size=8, shuffle=False))
    np.testing.assert_array_equal(single_array[0], np.arange(3.0))

    y = {"label": np.arange(3), "weight": np.ones(3)}
    x = {"words": np.array(["a", "b", "c"])}
    ((features, labels),) = _batches(numpy_input_fn(x, y, batch_size=3, shuffle=False))
    assert sorted(labels) == ["label", "weight"]
    np.testing.assert_array_equal(features["words"], [b"a", b"b", b"c"])


def test_shuffle_permutes_each_epoch_reproducibly_from_the_run_config_seed():
    x = np.arange(20)
    config = keras_estimator.RunConfig(tf_random_seed=3)

    def orders(input_fn):
        rows = np.concatenate(_batches(input_fn, config=config))
        return rows[:20], rows[20:]

    first_fn = numpy_input_fn(x, batch_size=7, num_epochs=2, shuffle=True)
    epoch_1, epoch_2 = orders(first_fn)
    assert sorted(epoch_1) == sorted(epoch_2) == list(range(20))
    assert list(epoch_1) != list(range(20)) and list(epoch_1) != list(epoch_2)
    # A new input_fn on the same data replays the same orders...
    replay_1, replay_2 = orders(
        numpy_input_fn(x, batch_size=7, num_epochs=2, shuffle=True)
    )
    np.testing.assert_array_equal(replay_1, epoch_1)
    np.testing.assert_array_equal(replay_2, epoch_2)
    # ...while calling the same input_fn again (a second train()) does not.
    again_1, _ = orders(first_fn)
    assert list(again_1) != list(epoch_1)

    unshuffled = numpy_input_fn(x, batch_size=7, num_epochs=1, shuffle=False)
    np.testing.assert_array_equal(np.concatenate(_batches(unshuffled)), x)


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        (
            {"shuffle": None},
            ValueError,
            r"shuffle must be provided .*got None.*shuffle=True",
        ),
        ({"shuffle": "yes"}, ValueError, r"explicitly set as boolean; got 'yes'"),
        (
            {"batch_size": 0},
            ValueError,
            r"batch_size must be a positive integer; got 0",
        ),
        (
            {"batch_size": 2.5},
            ValueError,
            r"batch_size must be a positive integer; got 2.5",
        ),
        (
            {"batch_size": True},
            ValueError,
            r"batch_size must be a positive integer; got True",
        ),
        (
            {"num_epochs": -1},
            ValueError,
            r"num_epochs must be a non-negative integer or None",
        ),
        (
            {"queue_capacity": -1},
            ValueError,
            r"queue_capacity must be a positive integer",
        ),
        ({"num_threads": 0}, ValueError, r"num_threads must be a positive integer"),
        (
            {"x": [1.0, 2.0]},
            TypeError,
            r"x must be a dict or array; got list",
        ),
        ({"x": {}}, ValueError, r"x cannot be an empty dict"),
        (
            {"x": np.zeros((0, 2))},
            ValueError,
            r"x cannot be an empty array \(got shape \(0, 2\)\)",
        ),
        ({"x": {1: np.arange(3)}}, TypeError, r"keys of x must be strings .*\[1\]"),
        (
            {"x": {"a": np.float32(1.0)}},
            ValueError,
            r"x\['a'\] must be an array .*scalar",
        ),
        ({"y": {}}, ValueError, r"y cannot be empty dict; pass None"),
        (
            {"y": np.arange(4)},
            ValueError,
            r"mismatched.*Shapes in x: \{'a': \(3,\)\}; shapes in y: \(4,\)",
        ),
        ({"y": {"a": np.arange(3)}}, ValueError, r"1 duplicate keys .*\['a'\]"),
    ],
)
def test_invalid_arguments_are_rejected_at_the_call(kwargs, error, pattern):
    arguments = {"x": {"a": np.arange(3)}, "y": None, "shuffle": False, **kwargs}
    with pytest.raises(error, match=pattern):
        numpy_input_fn(**arguments)


def test_input_fn_reads_its_arrays_when_called():
    x = {"a": np.arange(3)}
    input_fn = numpy_input_fn(x, np.arange(3), shuffle=False)
    x["b"] = np.arange(4)  # 2.15 read x when the input_fn ran; so does this.
    with pytest.raises(ValueError, match=r"mismatched.*'b': \(4,\)"):
        input_fn()


# ---------------------------------------------------------------- install


@pytest.fixture
def installed():
    record = keras_estimator.install()
    try:
        yield record
    finally:
        keras_estimator.uninstall()


def _v1_namespaces():
    """Every way a program reaches tf.compat.v1."""
    return [
        tf.compat.v1,
        importlib.import_module("tensorflow.compat.v1"),
        tf.compat.v2.compat.v1,
    ]


def _originals():
    return {
        "train": {name: getattr(tf.compat.v1.train, name) for name in TRAIN_NAMES},
        "layers": [namespace.layers for namespace in _v1_namespaces()],
    }


def test_install_makes_tf_estimator_names_resolve_to_this_package(installed):
    assert installed.newly_installed and installed.patched
    assert tf.estimator is keras_estimator
    assert tf.compat.v2.estimator is keras_estimator
    from tensorflow import estimator

    assert estimator.Estimator is keras_estimator.Estimator
    for namespace in _v1_namespaces():
        assert namespace.estimator is compat.estimator
        assert namespace.layers is compat.layers
    assert tf.compat.v1.estimator.inputs.numpy_input_fn is numpy_input_fn
    assert tf.compat.v1.estimator.RunConfig is keras_estimator.RunConfig
    for name in TRAIN_NAMES:
        assert getattr(tf.compat.v1.train, name) is getattr(keras_estimator, name), name
    # Other tf.compat.v1.train names are TensorFlow's.
    assert tf.compat.v1.train.AdamOptimizer.__module__.startswith("tensorflow.")


def test_install_makes_module_imports_work(installed):
    assert importlib.import_module("tensorflow.estimator") is keras_estimator
    assert (
        importlib.import_module("tensorflow.estimator.experimental")
        is keras_estimator.experimental
    )
    inputs = importlib.import_module("tensorflow.compat.v1.estimator.inputs")
    assert inputs.numpy_input_fn is numpy_input_fn
    from tensorflow.estimator import EstimatorSpec

    assert EstimatorSpec is keras_estimator.EstimatorSpec
    import tensorflow_estimator

    assert tensorflow_estimator.estimator is compat.estimator


def test_uninstall_restores_everything():
    before = _originals()
    modules_before = {
        name: sys.modules.get(name)
        for name in ("tensorflow.estimator", "tensorflow_estimator")
    }
    keras_estimator.install()
    assert tf.compat.v1.train.SessionRunHook is keras_estimator.SessionRunHook
    keras_estimator.uninstall()
    after = _originals()
    for name in TRAIN_NAMES:
        assert after["train"][name] is before["train"][name], name
    assert all(layers is not compat.layers for layers in after["layers"])
    with pytest.raises(AttributeError, match="not available with Keras 3"):
        tf.compat.v1.layers.dense  # noqa: B018 - TensorFlow's own stub again
    assert not hasattr(tf, "estimator")
    assert not hasattr(tf.compat.v2, "estimator")
    assert not any(hasattr(ns, "estimator") for ns in _v1_namespaces())
    for name, module in modules_before.items():
        assert sys.modules.get(name) is module, name
    keras_estimator.uninstall()  # a second uninstall is a no-op


def test_install_is_idempotent_and_a_context_manager():
    with keras_estimator.install() as first:
        second = keras_estimator.install()
        assert not second.newly_installed
        assert second.patched == first.patched
        with second:  # leaving a nested block keeps the outer installation
            pass
        assert tf.estimator is keras_estimator
    assert not hasattr(tf, "estimator")


# ---------------------------------------------------------------- end to end

# Installs, then runs the script as `python script.py IRIS_CSV` would.
_LAUNCHER = (
    "import runpy, sys\n"
    "import keras_estimator\n"
    "keras_estimator.install()\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def test_unmodified_tf215_script_runs_and_matches_tf215_accuracy():
    assert "keras_estimator" not in SCRIPT.read_text()  # a plain tf.estimator program
    result = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, str(SCRIPT), str(IRIS_CSV)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    last_line = result.stdout.strip().splitlines()[-1]
    match = re.fullmatch(r"Test set accuracy: (\d\.\d{4})", last_line)
    assert match, result.stdout[-2000:]
    assert float(match.group(1)) >= ACCURACY_BAR, result.stdout[-2000:]
    assert result.stdout.count("Prediction is") == 3


# ---------------------------------------------------------------- tf.losses names


# Lowercase loss functions of tf.losses / tf.keras.losses in 2.15 (dir() of
# both modules in tensorflow 2.15.1, minus deserialize/get/serialize).
LOSS_FUNCTIONS_2_15 = (
    "binary_crossentropy binary_focal_crossentropy categorical_crossentropy "
    "categorical_focal_crossentropy categorical_hinge cosine_similarity hinge "
    "huber kl_divergence kld kullback_leibler_divergence log_cosh logcosh mae "
    "mape mean_absolute_error mean_absolute_percentage_error mean_squared_error "
    "mean_squared_logarithmic_error mse msle poisson "
    "sparse_categorical_crossentropy squared_hinge"
).split()


def test_tf_losses_has_every_lowercase_loss_function_of_2_15(installed):
    for module in (tf.losses, tf.keras.losses):
        missing = [
            name
            for name in LOSS_FUNCTIONS_2_15
            if not callable(getattr(module, name, None))
        ]
        assert missing == []


def test_tf_losses_mean_squared_error_computes_2_15s_values(installed):
    # The tensorflow/models regression cookbook's loss. 2.15 gives the mean
    # over the last axis per example: [[1, 2], [3, 5]] vs [[1, 1], [1, 1]]
    # -> [0.5, 10.0]; mean_absolute_error -> [0.5, 3.0].
    y_true = tf.constant([[1.0, 1.0], [1.0, 1.0]])
    y_pred = tf.constant([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_allclose(
        tf.losses.mean_squared_error(y_true, y_pred), [0.5, 10.0]
    )
    np.testing.assert_allclose(
        tf.keras.losses.mean_absolute_error(y_true, y_pred), [0.5, 3.0]
    )
    np.testing.assert_allclose(
        tf.losses.mean_squared_logarithmic_error(y_true, y_pred),
        tf.keras.losses.msle(y_true, y_pred),
    )


def test_uninstall_removes_the_loss_names_keras_lacks():
    had = hasattr(tf.keras.losses, "mean_squared_error")
    keras_estimator.install()
    keras_estimator.uninstall()
    assert hasattr(tf.keras.losses, "mean_squared_error") == had
