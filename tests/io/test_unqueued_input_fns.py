"""Input_fns reading TF1 queue state without a queue runner run as in tf.estimator 2.15.

An input_fn returning `tf.compat.v1.train.limit_epochs` tensors, or batches
of a `FIFOQueue` it fills and dequeues itself (2.15's own KMeans tests do
both), starts no queue runner, so calling it eagerly raised nothing: it ran
once, every step got its first values, and prediction never ended. 2.15
evaluated those tensors again at every step of its session: each step took
the next batch, and the end of `limit_epochs`' epochs ended evaluation,
prediction and training. 2.15's results of the same recipes were recorded by
`tests/fixtures/make_tf215_unqueued_input_fixture.py`.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.engine import inputs
from tests.fixtures import make_tf215_unqueued_input_fixture as recipe

EXPECTED = json.loads(recipe.OUT.read_text())


@pytest.fixture(scope="module")
def model_fn_results(tmp_path_factory):
    return recipe.record_model_fn(tf, ke, str(tmp_path_factory.mktemp("model_dir")))


def test_each_training_step_takes_the_next_batch_of_a_self_dequeued_queue(model_fn_results):
    """Five steps over batches [1,2,3], [4,5,6], [7,1,2], ...: 2.15's sum of
    the features seen, 57 (the first batch five times would be 30), and its
    weight 2.0476887."""
    ours, expected = model_fn_results["train_cycling"], EXPECTED["model_fn"]["train_cycling"]
    assert ours["total"] == expected["total"] == 57.0
    assert ours["global_step"] == expected["global_step"] == 5.0
    np.testing.assert_allclose(ours["w"], expected["w"], rtol=1e-6)


def test_the_end_of_limit_epochs_ends_training_before_its_steps(model_fn_results):
    """train(steps=10) over two epochs of a constant batch runs 2 steps, as in 2.15."""
    ours = model_fn_results["train_two_epochs"]
    expected = EXPECTED["model_fn"]["train_two_epochs"]
    assert ours["global_step"] == expected["global_step"] == 7.0
    assert ours["total"] == expected["total"] == 69.0
    np.testing.assert_allclose(ours["w"], expected["w"], rtol=1e-6)


def test_the_end_of_limit_epochs_ends_evaluation_with_2_15s_metrics(model_fn_results):
    """evaluate(steps=10) over four epochs of self-dequeued batches evaluates
    four different batches: 2.15's mean_x 3.5833333 (43 / 12) and loss 0.3891349."""
    ours = model_fn_results["evaluate_four_epochs"]
    expected = EXPECTED["model_fn"]["evaluate_four_epochs"]
    assert sorted(ours) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(ours[key], value, rtol=1e-6, err_msg=key)


@pytest.mark.parametrize("case", ["predict_two_epochs", "predict_cycling_once"])
def test_prediction_ends_with_limit_epochs_as_in_2_15(model_fn_results, case):
    """Two epochs of a batch of 3 give 6 predictions, three epochs of
    self-dequeued batches of 2 give x = 1..6, then prediction ends (it did
    not end: the reads stopped at MAX_PREDICTIONS)."""
    ours, expected = model_fn_results[case], EXPECTED["model_fn"][case]
    assert len(ours) == len(expected) == 6
    np.testing.assert_allclose(ours, expected, rtol=1e-6)


def test_kmeans_over_batches_it_dequeues_itself_moves_as_in_2_15(tmp_path):
    """Mini-batch KMeans fed by an input_fn that cycles a FIFOQueue of point
    indices (2.15's kmeans_test pattern) takes a new batch at every step: its
    centres after 31 steps are those of the same batches given as a
    tf.data.Dataset, bit for bit, and 2.15's to 1e-3. (The first batch at
    every step moved them elsewhere. Past 1e-3 the two differ by KMeans'
    own arithmetic, which the dataset input shows as well: 55.3089 where
    2.15 had 55.3107.)"""
    ours = recipe.record_kmeans(tf, ke.compat.estimator, str(tmp_path / "queue"))
    points = recipe.kmeans_points()
    batches = tf.data.Dataset.from_tensor_slices(points).batch(30).repeat()
    from_dataset = recipe.record_kmeans(
        tf, ke.compat.estimator, str(tmp_path / "dataset"), input_fn=lambda: batches
    )
    expected = EXPECTED["kmeans"]
    np.testing.assert_array_equal(ours["centres_after_1"], expected["centres_after_1"])
    np.testing.assert_array_equal(ours["centres_after_31"], from_dataset["centres_after_31"])
    np.testing.assert_allclose(ours["centres_after_31"], expected["centres_after_31"], rtol=1e-3)


def test_an_input_fn_returning_a_dataset_made_from_a_dequeue_keeps_it():
    """A dataset is read as it is: its tensors were evaluated once in 2.15 too."""

    def input_fn():
        queue = tf.queue.FIFOQueue(10, tf.float32, ())
        queue.enqueue_many(tf.constant([1.0, 2.0, 3.0]))
        return tf.data.Dataset.from_tensor_slices({"x": queue.dequeue_many(2)})

    dataset = inputs.make_dataset(input_fn, ke.ModeKeys.PREDICT, {}, ke.RunConfig())
    assert [float(e["x"]) for e in dataset] == [1.0, 2.0]
