"""A model_fn's seeded random ops draw what tf.estimator 2.15's drew, call after call.

2.15 built a new graph per train(), evaluate() and predict() call: a seeded
random op took (graph seed, n), n counting the random ops before it, the
random initializers of restored variables included, and began its sequence
again in each call, going on from step to step within it.
`tests/fixtures/tf215_model_fn_random_ops.json` holds 2.15's draws, recorded
by `tests/fixtures/make_tf215_model_fn_random_ops_fixture.py` from the recipe
run here (a uniform, a normal and a truncated normal draw, and a dropout in
training).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
import keras_estimator.compat.estimator as compat_estimator
from tests.fixtures import make_tf215_model_fn_random_ops_fixture as recipe

FIXTURE = json.loads(recipe.OUT.read_text())["cases"]


@pytest.fixture(scope="module", params=recipe.CASES, ids=lambda case: f"seed={case[0]}")
def calls(request, tmp_path_factory):
    """(our calls' draws, 2.15's, whether tf_random_seed was set)."""
    seed, op_seed = request.param
    ours = recipe.record(tf, ke, str(tmp_path_factory.mktemp("model")), seed, op_seed)
    return ours, FIXTURE[f"seed={seed} op_seed={op_seed}"], seed is not None


def _assert_close(ours, expected, what):
    np.testing.assert_allclose(
        np.array(ours, np.float64), np.array(expected, np.float64), rtol=1e-6, err_msg=what
    )


def _by_draw(predictions):
    return {key: [example[key] for example in predictions] for key in recipe.DRAWS}


def test_predictions_draw_2_15s_values(calls):
    """The first prediction after training drew 2.15's 0.7780691 with
    tf_random_seed=3 (it drew 0.1273640, the seeds of a graph that did not
    count the restored variable's initializer), and every predict() call
    begins again (the second call went on to 0.8898706), on the same
    Estimator and on a new one."""
    ours, expected, _ = calls
    runs = [*zip(ours["predict"], expected["predict"], strict=True)]
    runs.append((ours["predict_new_estimator"], expected["predict_new_estimator"]))
    # An unseeded shuffle in the input_fn took the graph's first count.
    runs.append((ours["predict_shuffled_input"], expected["predict_shuffled_input"]))
    for index, (mine, theirs) in enumerate(runs):
        mine, theirs = _by_draw(mine), _by_draw(theirs)
        for key in recipe.DRAWS:
            _assert_close(mine[key], theirs[key], f"predict call {index}: {key}")


@pytest.mark.parametrize("call", ["train", "train_again", "train_shuffled_input"])
def test_training_steps_draw_2_15s_sequence(calls, call):
    """Each train() call draws 2.15's sequence from its start, one value per
    step (steps fetched by a hook drew the first value at every step), and
    its dropout keeps 2.15's units."""
    ours, expected, _ = calls
    assert len(ours[call]) == len(expected[call])
    for step, (mine, theirs) in enumerate(zip(ours[call], expected[call], strict=True)):
        assert sorted(mine) == sorted(theirs)
        for key in theirs:
            _assert_close(mine[key], theirs[key], f"{call} step {step}: {key}")


def test_evaluations_and_weights_are_2_15s(calls):
    """Both evaluate() calls average 2.15's two draws. With tf_random_seed
    the weights trained on them are 2.15's too (without it the initial
    weights were random in 2.15 as well), and so is the initial `w` after an
    input_fn with an unseeded shuffle, which took the graph's first count:
    2.15's `w` took the seeds (3, 1), [0.7864982, 0.0149581], where the
    model_fn's count here began at 0, as if the input_fn had made no random
    op."""
    ours, expected, seeded = calls
    for index, (mine, theirs) in enumerate(zip(ours["evaluate"], expected["evaluate"], strict=True)):
        for key in recipe.DRAWS:
            _assert_close(mine[key], theirs[key], f"evaluate call {index}: {key}")
    if seeded:
        _assert_close(ours["w"], expected["w"], "w")
        _assert_close(
            ours["initial_w_shuffled_input"], expected["initial_w_shuffled_input"], "initial w"
        )



def test_initial_weights_after_numpy_input_fn_are_2_15s(tmp_path):
    """2.15's numpy_input_fn(shuffle=True) made a RandomShuffleQueue in the
    model_fn's graph, which took the first count: with tf_random_seed=3 the
    initial `w` took (3, 1), [0.7864982, 0.0149581], and (3, 0),
    [-1.0539737, 0.8900815], with shuffle=False. Here both took (3, 0)."""
    ours = recipe.numpy_input_initial_w(tf, ke, str(tmp_path), compat_estimator.inputs.numpy_input_fn)
    expected = json.loads(recipe.OUT.read_text())["numpy_input_initial_w"]
    assert sorted(ours) == sorted(expected)
    for shuffle, value in expected.items():
        _assert_close(ours[shuffle], value, f"shuffle={shuffle}")


def test_tensorflow_random_kernels_are_left_as_they_were(calls):
    """The wrapping that gives seeded ops their shared state lasts only while
    the model_fn is traced: once the Estimator's calls are over, TensorFlow's
    own random op makers and get_seed are its own again, and a graph built
    by the program draws from the legacy kernels."""
    from tensorflow.python.framework import random_seed
    from tensorflow.python.ops import gen_random_ops

    for name in ("random_uniform", "random_standard_normal", "truncated_normal"):
        maker = getattr(gen_random_ops, name)
        assert getattr(maker, "original", None) is None, name
        assert maker.__module__ == gen_random_ops.__name__, name
    assert random_seed.get_seed.__module__ == random_seed.__name__
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(3)
        draw = tf.random.uniform([1], seed=5)
    assert draw.op.type == "RandomUniform"


def test_checkpoints_hold_the_model_fns_variables_only(tmp_path):
    """The seeded ops' shared state is no model variable: the checkpoint and
    get_variable_names() hold what 2.15's did, `global_step` and `w`."""

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [2, 1])
        noisy = tf.matmul(features["x"], w) + tf.random.uniform([1], seed=5)
        loss = tf.reduce_mean(tf.square(noisy - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions={"p": noisy})

    def input_fn():
        features = {"x": np.ones((8, 2), np.float32)}
        return tf.data.Dataset.from_tensor_slices((features, np.ones((8, 1), np.float32))).batch(2)

    estimator = ke.Estimator(model_fn, str(tmp_path), config=ke.RunConfig(tf_random_seed=3))
    estimator.train(input_fn, steps=3)
    names = [name for name, _ in tf.train.list_variables(estimator.latest_checkpoint())]
    assert names == ["global_step", "w"]
    assert estimator.get_variable_names() == ["global_step", "w"]
