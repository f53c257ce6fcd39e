"""A small in-memory input of evaluate() and predict() skips tf.data's rewrites.

An input that only slices and batches numeric tensors in memory, of at most
`inputs.SMALL_INPUT_BYTES`, is iterated without tf.data's static rewrites
and autotuning, its iterator made in one traced call (`inputs.make_iterator`):
the rewrites cost about 2 ms of CPU per new dataset, as much as a small
model's single-example prediction. The elements must be the same, in the
same order; every other input is iterated as TensorFlow iterates it.
"""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.engine import inputs
from keras_estimator._src.tf_internals import dataset_sources
from keras_estimator.compat import layers
from tests._models import make_data


def _elements(iterator):
    return [tf.nest.map_structure(lambda t: t.numpy(), e) for e in iterator]


def _assert_same_elements(made, expected):
    assert len(made) == len(expected)
    for got, want in zip(made, expected, strict=True):
        tf.nest.assert_same_structure(got, want)
        for got_value, want_value in zip(
            tf.nest.flatten(got), tf.nest.flatten(want), strict=True
        ):
            assert got_value.dtype == want_value.dtype
            np.testing.assert_array_equal(got_value, want_value)


_DTYPES = (np.float32, np.float64, np.int32, np.int64, np.bool_, np.uint8)


@st.composite
def _small_pipelines(draw):
    rows = draw(st.integers(1, 40))
    columns = draw(st.integers(1, 3))
    dtype = draw(st.sampled_from(_DTYPES))
    values = (np.arange(rows * columns) % 7).reshape(rows, columns).astype(dtype)
    labels = np.arange(rows, dtype=np.int32)
    source = draw(st.sampled_from(["slices_dict", "slices_tensor", "tensors"]))
    if source == "slices_dict":
        dataset = tf.data.Dataset.from_tensor_slices(({"x": values}, labels))
    elif source == "slices_tensor":
        dataset = tf.data.Dataset.from_tensor_slices(values)
    else:
        dataset = tf.data.Dataset.from_tensors({"x": values})
    for _ in range(draw(st.integers(0, 3))):
        step = draw(st.sampled_from(["batch", "take", "skip", "prefetch"]))
        if step == "batch":
            dataset = dataset.batch(draw(st.integers(1, 8)), drop_remainder=draw(st.booleans()))
        elif step == "take":
            dataset = dataset.take(draw(st.integers(-1, 10)))
        elif step == "skip":
            dataset = dataset.skip(draw(st.integers(0, 5)))
        else:
            dataset = dataset.prefetch(draw(st.integers(1, 3)))
    return dataset


@given(_small_pipelines())
def test_small_input_iterator_gives_the_same_elements_in_the_same_order(dataset):
    assert dataset_sources.in_memory_bytes(dataset) is not None
    _assert_same_elements(_elements(inputs.make_iterator(dataset)), _elements(iter(dataset)))


def test_in_memory_bytes_counts_the_sliced_tensors():
    x = np.zeros((10, 4), np.float32)
    y = np.zeros(10, np.int64)
    dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(3).take(2).skip(1)
    assert dataset_sources.in_memory_bytes(dataset) == 10 * 4 * 4 + 10 * 8
    assert dataset_sources.in_memory_bytes(tf.data.Dataset.from_tensors(x).prefetch(1)) == 160


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda d: d.map(lambda v: v * 2), id="map"),
        pytest.param(lambda d: d.filter(lambda v: v[0] > 0), id="filter"),
        pytest.param(lambda d: d.repeat(2), id="repeat"),
        pytest.param(lambda d: d.shuffle(4, seed=1), id="shuffle"),
        pytest.param(lambda d: d.with_options(tf.data.Options()), id="options"),
        pytest.param(lambda d: d.batch(2, num_parallel_calls=2), id="parallel_batch"),
        pytest.param(lambda d: d.cache(), id="cache"),
        pytest.param(
            lambda d: tf.data.Dataset.from_tensor_slices(["a", "b"]).batch(1), id="strings"
        ),
        pytest.param(lambda d: tf.data.Dataset.range(4), id="range"),
        pytest.param(
            lambda d: tf.data.Dataset.from_generator(lambda: iter([1.0]), tf.float32),
            id="generator",
        ),
        pytest.param(lambda d: tf.compat.v1.data.Dataset.from_tensors([1.0]), id="v1"),
    ],
)
def test_other_inputs_are_iterated_as_tensorflow_does(make, monkeypatch):
    dataset = make(tf.data.Dataset.from_tensor_slices(np.ones((4, 2), np.float32)))
    assert dataset_sources.in_memory_bytes(dataset) is None
    monkeypatch.setattr(inputs, "_small_input_iterator", _refuse)
    _assert_same_elements(_elements(inputs.make_iterator(dataset)), _elements(iter(dataset)))


def test_an_input_over_the_limit_is_iterated_as_tensorflow_does(monkeypatch):
    rows = inputs.SMALL_INPUT_BYTES // 4 + 1
    dataset = tf.data.Dataset.from_tensor_slices(np.zeros(rows, np.float32)).batch(rows)
    assert dataset_sources.in_memory_bytes(dataset) == rows * 4
    monkeypatch.setattr(inputs, "_small_input_iterator", _refuse)
    [batch] = list(inputs.make_iterator(dataset))
    assert batch.shape == (rows,)


def _refuse(dataset):
    raise AssertionError("a small-input iterator was made")


def test_small_input_iterator_is_made_without_rewrites_or_autotuning():
    dataset = tf.data.Dataset.from_tensor_slices(np.ones((6, 2), np.float32)).batch(4)
    inputs.make_iterator(dataset)
    made, _ = inputs._small_input_iterators[repr(dataset.element_spec)]
    [serialized] = [
        op.get_attr("serialized_options")
        for op in made.graph.get_operations()
        if op.type == "OptionsDataset"
    ]
    options = tf.data.Options()
    options._from_proto(_options_proto(serialized))
    assert options.experimental_optimization.apply_default_optimizations is False
    assert options.autotune.enabled is False


def _options_proto(serialized):
    from tensorflow.core.framework import dataset_options_pb2

    return dataset_options_pb2.Options.FromString(serialized)


def _model_fn(features, labels, mode):
    logits = layers.dense(layers.dense(features["x"], 8, activation=tf.nn.relu), 3)
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == ke.ModeKeys.EVAL:
        return ke.EstimatorSpec(
            mode,
            loss=loss,
            eval_metric_ops={
                "accuracy": tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1)),
                "mean_logit": tf.compat.v1.metrics.mean(logits),
            },
        )
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    train_op = optimizer.minimize(loss, tf.compat.v1.train.get_global_step())
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_evaluate_and_predict_on_a_small_input_give_the_values_of_the_default_path(
    tmp_path, monkeypatch
):
    """The same data through the small-input path and through TensorFlow's own."""
    x, y = make_data(40)
    estimator = ke.Estimator(_model_fn, str(tmp_path))
    estimator.train(
        lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(8), steps=5
    )

    def small():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8)

    def small_features():
        return tf.data.Dataset.from_tensor_slices({"x": x}).batch(8)

    made = []
    real = inputs._small_input_iterator
    monkeypatch.setattr(
        inputs, "_small_input_iterator", lambda dataset: made.append(1) or real(dataset)
    )
    inputs._small_input_iterators.clear()
    fast = (estimator.evaluate(small), list(estimator.predict(small_features)))
    assert made  # both took the small-input path
    monkeypatch.setattr(inputs, "SMALL_INPUT_BYTES", -1)
    default = (estimator.evaluate(small), list(estimator.predict(small_features)))
    assert fast[0].keys() == default[0].keys()
    for key in default[0]:
        assert type(fast[0][key]) is type(default[0][key])
        np.testing.assert_array_equal(fast[0][key], default[0][key])
    assert len(fast[1]) == len(default[1]) == 40
    for got, want in zip(fast[1], default[1], strict=True):
        np.testing.assert_array_equal(got["logits"], want["logits"])
