"""Inputs that never end are read without the optional's bookkeeping.

The fused loop reads an input that can never run out (`repeat()` of data of
a known size, through transformations that cannot end early) with a plain
`get_next` per step; every other input keeps the optional that lets a call
end when the input does. Both readings must train the same: the same
elements in the same order, the same steps per call, the same values hooks
see, bit for bit. An input whose cardinality says infinite but which can
still end (a `repeat()` of a generator or of a `filter` whose pass comes out
empty) keeps the optional, so training ends there as tf.estimator 2.15's did
at its OutOfRangeError.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

import keras_estimator
from keras_estimator._src.tf_internals import dataset_sources
from keras_estimator.compat import layers

v1 = tf.compat.v1

_X = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(12, 2)
_Y = (_X @ np.array([[1.5], [-2.0]], np.float32) + 0.5).astype(np.float32)


def _endless(dataset):
    return dataset_sources.never_ends(iter(dataset))


def _slices():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y))


@pytest.mark.parametrize(
    "make",
    [
        lambda: _slices().repeat().batch(4),
        lambda: _slices().shuffle(12, seed=1).repeat().batch(4, drop_remainder=True),
        lambda: _slices().map(lambda f, y: (f, y * 2.0)).repeat().batch(5).prefetch(2),
        lambda: _slices().batch(4).repeat().map(lambda f, y: (f, y), num_parallel_calls=2),
        lambda: tf.data.Dataset.zip((tf.data.Dataset.range(3).repeat(), _slices().repeat())),
        lambda: _slices().take(5).repeat().padded_batch(2),
        lambda: _slices().repeat().with_options(tf.data.Options()),
        lambda: _slices().repeat().repeat(),
    ],
)
def test_repeated_data_of_a_known_size_never_ends(make):
    assert _endless(make())


@pytest.mark.parametrize(
    "make",
    [
        lambda: _slices().batch(4),  # ends
        lambda: _slices().repeat(3).batch(4),  # ends
        lambda: _slices().repeat().take(7),  # ends
        lambda: _slices().skip(20).repeat(),  # an empty input repeated: ends at once
        # Infinite by its cardinality, yet a pass may come out empty.
        lambda: _slices().filter(lambda f, y: y[0] > 100.0).repeat(),
        lambda: tf.data.Dataset.from_generator(
            lambda: iter(()), output_signature=tf.TensorSpec([], tf.float32)
        ).repeat(),
        lambda: _slices().repeat().filter(lambda f, y: y[0] > 0.0),  # unknown
        lambda: _slices().batch(2).unbatch().repeat(),  # unbatch: not known to keep going
        lambda: tf.data.Dataset.choose_from_datasets(
            [_slices(), _slices()], tf.data.Dataset.range(2).repeat(), stop_on_empty_dataset=True
        ),
    ],
)
def test_inputs_that_end_or_may_end_are_read_with_the_optional(make):
    assert not _endless(make())


def test_an_iterator_of_no_dataset_is_read_with_the_optional():
    assert not dataset_sources.never_ends(object())


def _model_fn(features, labels, mode, params):
    net = layers.dense(features["x"], 3, activation=tf.nn.tanh, name="hidden")
    predictions = layers.dense(net, 1, name="out")
    loss = v1.losses.mean_squared_error(labels, predictions)
    train_op = v1.train.AdamOptimizer(0.05).minimize(loss, global_step=v1.train.get_global_step())
    return keras_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


class _Recorder(keras_estimator.SessionRunHook):
    """Fetches the loss and the global step every `every` steps (or never)."""

    def __init__(self, every, observes_only):
        self.every, self.observes_only, self.seen, self.calls = every, observes_only, [], 0

    def before_run(self, run_context):
        self.calls += 1
        if self.every and self.calls % self.every == 0:
            return keras_estimator.SessionRunArgs(
                {"loss": "mean_squared_error/value:0", "step": v1.train.get_global_step()}
            )
        return None

    def after_run(self, run_context, run_values):
        if run_values.results:
            self.seen.append((int(run_values.results["step"]), float(run_values.results["loss"])))


def _train(tmp_path, monkeypatch, endless, steps, every, observes_only, log_every, batch):
    if not endless:
        monkeypatch.setattr(dataset_sources, "never_ends", lambda iterator: False)
    else:
        monkeypatch.undo()
    config = keras_estimator.RunConfig(
        log_step_count_steps=log_every, save_summary_steps=log_every, tf_random_seed=3
    )
    est = keras_estimator.Estimator(
        _model_fn, str(tmp_path / f"model_{endless}"), config=config, params={}
    )
    hook = _Recorder(every, observes_only)

    def input_fn():
        return _slices().shuffle(12, seed=5).repeat().batch(batch)

    est.train(input_fn, steps=steps, hooks=[hook])
    est.train(input_fn, steps=3)
    weights = {name: est.get_variable_value(name) for name in est.get_variable_names()}
    return weights, hook.seen


@settings(deadline=None)
@given(
    steps=st.integers(1, 40),
    every=st.sampled_from([0, 1, 3, 7]),
    observes_only=st.booleans(),
    log_every=st.sampled_from([1, 5, 100]),
    batch=st.sampled_from([4, 5]),
)
def test_endless_reading_trains_as_the_optional_s_bit_for_bit(
    tmp_path_factory, steps, every, observes_only, log_every, batch
):
    with pytest.MonkeyPatch.context() as monkeypatch:
        tmp_path = tmp_path_factory.mktemp("endless")
        arguments = (steps, every, observes_only, log_every, batch)
        with_optional = _train(tmp_path, monkeypatch, False, *arguments)
        endless = _train(tmp_path, monkeypatch, True, *arguments)
    assert endless[1] == with_optional[1]
    assert len(endless[1]) == (steps // every if every else 0)
    assert endless[0].keys() == with_optional[0].keys()
    for name, value in endless[0].items():
        np.testing.assert_array_equal(value, with_optional[0][name], err_msg=name)
    assert endless[0]["global_step"] == steps + 3


def test_a_repeated_generator_whose_next_pass_is_empty_ends_training(tmp_path):
    # tf.estimator 2.15 (its OutOfRangeError ended training): 3 steps.
    batches = iter([(_X[i : i + 4], _Y[i : i + 4]) for i in (0, 4, 8)])

    def input_fn():
        data = tf.data.Dataset.from_generator(
            lambda: batches,
            output_signature=(
                tf.TensorSpec([None, 2], tf.float32),
                tf.TensorSpec([None, 1], tf.float32),
            ),
        )
        return data.map(lambda x, y: ({"x": x}, y)).repeat()

    est = keras_estimator.Estimator(_model_fn, str(tmp_path), params={})
    est.train(input_fn, steps=10)
    assert est.get_variable_value("global_step") == 3


def test_a_repeated_filter_that_keeps_nothing_ends_training_before_a_step(tmp_path):
    def input_fn():
        return _slices().filter(lambda f, y: y[0] > 100.0).repeat().batch(4)

    # As in 2.15: no step, and the checkpoint of step 0.
    est = keras_estimator.Estimator(_model_fn, str(tmp_path), params={})
    with pytest.warns(UserWarning, match="made no steps"):
        est.train(input_fn, steps=5)
    assert est.get_variable_value("global_step") == 0
