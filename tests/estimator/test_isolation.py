"""Estimators in one process are isolated, and leave nothing behind.

Each Estimator's traces see only its own variables in the TF1 collections
(as each tf.estimator graph did), so several Estimators in one process train
exactly as each would alone in a fresh process; an Estimator that is deleted
frees its variables and functions, and no Estimator keeps a file open after
train() or evaluate() returns.
"""

import ctypes
import gc
import json
import os
import resource
import subprocess
import sys
import weakref

import numpy as np
import pytest
import tensorflow as tf
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import keras_estimator as ke
from keras_estimator.compat import layers
from tests._models import input_fn, make_data

X, Y = make_data()
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
L2_WEIGHT = 1e-2
# What each trace of `l2_adam_model_fn` saw: (mode, number of trainable
# variables, names of global variables). Params are copied by the
# Estimator, as tf.estimator deep-copied them, so a list there would not do.
_RECORD = []


def l2_adam_model_fn(features, labels, mode, params):
    """v1 layers, Adam, and an L2 penalty over the TF1 trainable collection."""
    net = features["x"]
    for units in params.get("hidden", [8]):
        net = layers.dense(net, units, activation=tf.nn.relu)
    logits = layers.dense(net, 3)
    trainable = tf.compat.v1.trainable_variables()
    _RECORD.append(
        (mode, len(trainable), sorted(v.name for v in tf.compat.v1.global_variables()))
    )
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"logits": logits})
    penalty = L2_WEIGHT * tf.add_n([tf.nn.l2_loss(v) for v in trainable])
    tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.REGULARIZATION_LOSSES, penalty)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    loss += tf.compat.v1.losses.get_regularization_loss()
    if mode == ke.ModeKeys.EVAL:
        return ke.EstimatorSpec(mode, loss=loss)
    optimizer = tf.compat.v1.train.AdamOptimizer(0.05)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def train_and_report(seed, model_dir, steps=6):
    """Trains one seeded Estimator; returns its eval loss and weights (JSON-able)."""
    est = ke.Estimator(
        l2_adam_model_fn,
        model_dir=model_dir,
        params={"hidden": [8]},
        config=ke.RunConfig(tf_random_seed=seed, save_summary_steps=2),
    )
    est.train(input_fn(X, Y), steps=steps)
    results = est.evaluate(input_fn(X, Y, repeat=False))
    weights = {
        name: est.get_variable_value(name).tolist()
        for name in ("dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias")
    }
    return {"loss": float(results["loss"]), "weights": weights}


_SUBPROCESS = """
import json, sys
import tensorflow as tf
tf.config.experimental.enable_op_determinism()
tf.get_logger().setLevel("ERROR")
from tests.estimator.test_isolation import train_and_report
print("RESULT " + json.dumps(train_and_report(int(sys.argv[1]), sys.argv[2])))
"""


def _in_fresh_processes(runs):
    """`train_and_report(seed, model_dir)` for each run, each in a new process."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow")
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _SUBPROCESS, str(seed), model_dir],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed, model_dir in runs
    ]
    reports = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr[-3000:]
        line = [s for s in stdout.splitlines() if s.startswith("RESULT ")][-1]
        reports.append(json.loads(line[len("RESULT ") :]))
    return reports


def test_estimators_in_one_process_train_as_in_fresh_processes(tmp_path):
    seeds = [3, 3, 7]
    in_process = [train_and_report(s, str(tmp_path / f"in_{i}")) for i, s in enumerate(seeds)]
    # The same seed gives the same run, whatever ran before it here.
    np.testing.assert_allclose(in_process[0]["loss"], in_process[1]["loss"], rtol=1e-6)
    alone = _in_fresh_processes([(3, str(tmp_path / "alone_3")), (7, str(tmp_path / "alone_7"))])
    for mine, theirs in zip((in_process[1], in_process[2]), alone, strict=True):
        np.testing.assert_allclose(mine["loss"], theirs["loss"], rtol=1e-5)
        for name, value in theirs["weights"].items():
            np.testing.assert_allclose(mine["weights"][name], value, rtol=1e-5, atol=1e-6)


def test_model_fn_sees_only_its_own_variables(tmp_path):
    del _RECORD[:]
    for index in range(3):
        est = ke.Estimator(
            l2_adam_model_fn, model_dir=str(tmp_path / str(index)), params={"hidden": [8]}
        )
        est.train(input_fn(X, Y), steps=2)
        est.evaluate(input_fn(X, Y, repeat=False), steps=1)
        next(est.predict(input_fn(X, Y, repeat=False)))
    by_mode = {}
    for mode, num_trainable, global_names in _RECORD:
        by_mode.setdefault(mode, set()).add((num_trainable, tuple(global_names)))
    assert sorted(by_mode) == ["eval", "infer", "train"]
    expected = (
        4,
        ("dense/bias:0", "dense/kernel:0", "dense_1/bias:0", "dense_1/kernel:0", "global_step:0"),
    )
    for mode, seen in by_mode.items():
        # Every trace of every Estimator, before the optimizer: the two
        # layers' kernels and biases, and the global step, as in a TF1 graph.
        assert seen == {expected}, (mode, seen)
    # Nothing lands in TensorFlow's global graph.
    global_graph = tf.compat.v1.get_default_graph()
    assert global_graph.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES) == []


def test_deleted_estimator_frees_its_variables(tmp_path):
    variables = []

    def model_fn(features, labels, mode, params):
        spec = l2_adam_model_fn(features, labels, mode, params)
        variables.extend(weakref.ref(v) for v in tf.compat.v1.global_variables())
        return spec

    est = ke.Estimator(model_fn, model_dir=str(tmp_path), params={"hidden": [8]})
    est.train(input_fn(X, Y), steps=2)
    est.evaluate(input_fn(X, Y, repeat=False), steps=1)
    estimator_ref = weakref.ref(est)
    del est
    gc.collect()
    assert estimator_ref() is None
    assert variables
    assert [r() for r in variables if r() is not None] == []


def _event_files_open(directory):
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed since listed
            continue
        if target.startswith(str(directory)) and "tfevents" in target:
            found.append(target)
    return found


def test_no_event_file_stays_open_and_summaries_continue(tmp_path):
    est = ke.Estimator(
        l2_adam_model_fn,
        model_dir=str(tmp_path),
        params={"hidden": [8]},
        config=ke.RunConfig(save_summary_steps=5),
    )
    est.train(input_fn(X, Y), steps=7)
    assert _event_files_open(tmp_path) == []
    est.evaluate(input_fn(X, Y, repeat=False), steps=2)
    assert _event_files_open(tmp_path) == []
    # The same Estimator, its traced steps reused, writes on.
    est.train(input_fn(X, Y), steps=7)
    assert _event_files_open(tmp_path) == []
    events = EventAccumulator(str(tmp_path), size_guidance={"scalars": 0})
    events.Reload()
    # Each train() starts its summary timer anew, as tf.estimator's did.
    # Labelled with the step after the run, as tf.estimator 2.15 wrote them.
    assert sorted(e.step for e in events.Scalars("loss")) == [1, 6, 8, 13]


def _resident_mb():
    # Freed heap pages go back to the system first, so that resident memory
    # tracks live memory rather than the allocator's high-water mark.
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def _open_fds():
    return len(os.listdir("/proc/self/fd"))


# Hidden layers of 640 units: about 1.6 MB per kernel, 6 MB with Adam's slots.
_BIG = [640, 640]
_MODEL_MB = 3 * 4 * (4 * 640 + 640 * 640 + 640 * 3) / 2**20


def _growth_over(num_estimators, tmp_path):
    """RSS (MB) and fd growth from the 3rd to the last of `num_estimators`."""
    figures = []
    for index in range(num_estimators):
        est = ke.Estimator(
            l2_adam_model_fn, model_dir=str(tmp_path / str(index)), params={"hidden": _BIG}
        )
        est.train(input_fn(X, Y), steps=3)
        est.evaluate(input_fn(X, Y, repeat=False), steps=1)
        del est
        gc.collect()
        figures.append((_resident_mb(), _open_fds()))
    # The first Estimators warm up process-wide caches (kernels, Keras state).
    (rss_start, fds_start), (rss_end, fds_end) = figures[2], figures[-1]
    return rss_end - rss_start, fds_end - fds_start


def _check_flat(num_estimators, tmp_path):
    rss_growth, fd_growth = _growth_over(num_estimators, tmp_path)
    counted = num_estimators - 3
    # A leak of the model alone would add _MODEL_MB per Estimator: allow a
    # fifth of that, on average.
    assert rss_growth < counted * _MODEL_MB / 5, (rss_growth, counted, _MODEL_MB)
    assert fd_growth <= 2, fd_growth


def test_memory_and_fds_flat_over_estimators(tmp_path):
    _check_flat(20, tmp_path)


@pytest.mark.slow
def test_memory_and_fds_flat_over_many_estimators(tmp_path):
    _check_flat(50, tmp_path)
