"""Initial weights of model_fn variables under RunConfig(tf_random_seed=S).

What holds (and is tested): the same seed gives identical initial weights in
two Estimators and in two processes; another seed gives other weights.
The values themselves are not tf.estimator 2.15's (see docs/differences.md,
seeding): with only the graph seed set, TensorFlow takes the op seed from the
graph's op count when the initializer is made, and the step graph built here
holds other ops before the variable than 2.15's graph did.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke


def _model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [2, 3])
    step = tf.compat.v1.train.get_or_create_global_step()
    # The step leaves `w` as initialized.
    return ke.EstimatorSpec(
        mode,
        loss=tf.reduce_sum(features["x"]) * tf.reduce_sum(w),
        train_op=tf.compat.v1.assign_add(step, 1),
        predictions={"y": features["x"]},
    )


def _input_fn():
    return {"x": tf.ones([2, 1])}, tf.ones([2, 1])


def _initial_w(model_dir, seed):
    est = ke.Estimator(
        _model_fn, model_dir=str(model_dir), config=ke.RunConfig(tf_random_seed=seed)
    )
    est.train(_input_fn, steps=1)
    return est.get_variable_value("w")


def test_same_seed_gives_the_same_initial_weights_in_two_estimators(tmp_path):
    first = _initial_w(tmp_path / "a", 1)
    second = _initial_w(tmp_path / "b", 1)
    assert first.shape == (2, 3)
    np.testing.assert_array_equal(first, second)
    # Glorot-uniform range of a [2, 3] variable, and not all one value.
    limit = np.sqrt(6.0 / (2 + 3))
    assert np.all(np.abs(first) <= limit)
    assert len(np.unique(first)) == 6


def test_another_seed_gives_other_initial_weights(tmp_path):
    one = _initial_w(tmp_path / "a", 1)
    two = _initial_w(tmp_path / "b", 2)
    assert not np.allclose(one, two), (one, two)


_CHILD = """
import json, sys, tempfile
sys.path.insert(0, {root!r})
from tests.estimator.test_seeding import _initial_w
print(json.dumps(_initial_w(tempfile.mkdtemp(), 1).tolist()))
"""


@pytest.mark.slow
def test_same_seed_gives_the_same_initial_weights_in_another_process(tmp_path):
    import pathlib

    root = str(pathlib.Path(__file__).resolve().parents[2])
    out = (
        subprocess.run(
            [sys.executable, "-c", _CHILD.format(root=root)],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    child = np.array(json.loads(out), dtype=np.float32)
    np.testing.assert_array_equal(child, _initial_w(tmp_path, 1))


# tf.estimator 2.15's initial `w` with tf_random_seed=1 (its graph seeded the
# initializer's RandomUniform with seeds (1, 0)).
W_2_15 = [
    [0.6850836277008057, -0.9232966899871826, 0.8581399917602539],
    [-0.7246257066726685, -0.9571702480316162, 0.09927082061767578],
]


def test_kernel_matches_2_15_but_the_seed_pair_does_not(tmp_path):
    # Same random kernel: 2.15's seed pair gives 2.15's numbers here too.
    limit = np.sqrt(6.0 / (2 + 3))
    uniform = tf.raw_ops.RandomUniform(shape=[2, 3], dtype=tf.float32, seed=1, seed2=0)
    np.testing.assert_array_equal(
        (uniform * (2 * limit) - limit).numpy(), np.array(W_2_15, np.float32)
    )
    # Documented difference: the initializer runs eagerly, with another op seed.
    assert not np.allclose(_initial_w(tmp_path, 1), W_2_15)
