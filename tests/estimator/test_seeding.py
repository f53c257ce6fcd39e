"""Initial weights of model_fn variables under RunConfig(tf_random_seed=S).

The same seed gives identical initial weights in two Estimators and in two
processes; another seed gives other weights. A TF initializer without a
seed of its own gets the seeds tf.estimator 2.15's graph gave it (graph
seed, n-th unseeded random op of the model_fn), so the weights are 2.15's:
`tests/fixtures/tf215_seeding.json` holds 2.15's values, recorded by
`tests/fixtures/make_tf215_seeding_fixture.py` from the same recipes.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests.fixtures import make_tf215_seeding_fixture as recipes

FIXTURE = json.loads(recipes.OUT.read_text())


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


def test_initial_weights_are_2_15s(tmp_path):
    np.testing.assert_array_equal(_initial_w(tmp_path, 1), np.array(W_2_15, np.float32))


@pytest.mark.parametrize("case", [*recipes.MODEL_FNS, "dnn"])
def test_initial_weights_of_2_15_recipes(tmp_path, case):
    """Several TF initializers, an unseeded random op between two, zeros, an
    initializer with its own seed, and DNNRegressor's layers start at 2.15's values."""
    ours = recipes.initial_values(tf, ke, case, str(tmp_path))
    expected = FIXTURE["cases"][case]
    assert sorted(ours) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(
            np.array(ours[name], np.float32), np.array(value, np.float32), err_msg=name
        )
