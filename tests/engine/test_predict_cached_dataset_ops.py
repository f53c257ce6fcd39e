"""An input_fn called again makes its datasets by cached traced functions.

Each `evaluate()` and `predict()` call calls the input_fn, whose eager
dataset ops TensorFlow instantiates as a new function every time (its
eager kernel cache refuses dataset ops): about 0.5 ms of CPU each, as much
as a small model's single-example prediction. While the Estimator calls an
input_fn, the dataset makers of `eager_dataset_ops` run an op seen before
through a traced function kept for its attributes. The datasets must be
TensorFlow's, element for element, errors included; TensorFlow's makers
must be its own outside those calls, and the environment can opt out.
"""

import threading

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st
from tensorflow.python.framework import op_callbacks
from tensorflow.python.ops import gen_dataset_ops

import keras_estimator as ke
from keras_estimator._src.engine import inputs
from keras_estimator._src.tf_internals import eager_dataset_ops
from keras_estimator.compat import layers
from tests._models import make_data

_X, _Y = make_data(num_examples=48)


def _model_fn(features, labels, mode):
    logits = layers.dense(features["x"], 3)
    predictions = {"class_ids": tf.argmax(logits, 1), "logits": logits}
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(
        mode,
        loss=loss,
        train_op=train_op,
        eval_metric_ops={
            "accuracy": tf.compat.v1.metrics.accuracy(labels, predictions["class_ids"])
        },
    )


def _train_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(8)


def _eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).batch(8)


def _predict_input_fn():
    return tf.data.Dataset.from_tensor_slices({"x": _X[:3]}).batch(1)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    est = ke.Estimator(_model_fn, model_dir=str(tmp_path_factory.mktemp("cached_ops")))
    est.train(_train_input_fn, steps=3)
    return est


class _EagerOps:
    """Records the op types run eagerly while inside."""

    def __init__(self):
        self.types = []

    def __call__(self, op_type, inputs, attrs, outputs, op_name=None, graph=None):
        if graph is None:
            self.types.append(op_type.decode() if isinstance(op_type, bytes) else op_type)
        return None

    def __enter__(self):
        op_callbacks.add_op_callback(self)
        return self

    def __exit__(self, *exc):
        op_callbacks.remove_op_callback(self)


_DATASET_OPS = {"TensorSliceDataset", "BatchDatasetV2"}


@pytest.mark.parametrize("call", ["evaluate", "predict"])
def test_a_repeated_input_fn_runs_no_eager_dataset_op(trained, call):
    def run():
        if call == "evaluate":
            return trained.evaluate(_eval_input_fn)
        return list(trained.predict(_predict_input_fn))

    first = run()
    run()  # the ops seen a second time are traced here
    with _EagerOps() as ops:
        again = run()
    assert not _DATASET_OPS & set(ops.types), ops.types
    if call == "evaluate":
        assert again == first
    else:
        for got, want in zip(again, first, strict=True):
            np.testing.assert_array_equal(got["logits"], want["logits"])


def test_the_environment_opts_out(trained, monkeypatch):
    monkeypatch.setenv(inputs.CACHED_DATASET_OPS_VARIABLE, "0")
    for _ in range(2):
        list(trained.predict(_predict_input_fn))
    with _EagerOps() as ops:
        list(trained.predict(_predict_input_fn))
    assert _DATASET_OPS <= set(ops.types), ops.types


def test_tensorflows_makers_are_its_own_outside_the_input_fn(trained):
    original = gen_dataset_ops.tensor_slice_dataset
    seen = {}

    def input_fn():
        seen["routed"] = gen_dataset_ops.tensor_slice_dataset is not original
        seen["flag"] = eager_dataset_ops.is_routing()
        return _predict_input_fn()

    list(trained.predict(input_fn))
    assert seen == {"routed": True, "flag": True}
    assert gen_dataset_ops.tensor_slice_dataset is original
    assert not eager_dataset_ops.is_routing()


def test_another_threads_datasets_keep_tensorflows_eager_ops():
    """Only the thread inside the context has its dataset ops routed."""
    inside, done = threading.Event(), threading.Event()

    def hold():
        with eager_dataset_ops.cached_dataset_ops(single_threaded=True):
            inside.set()
            done.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert inside.wait(30)
        for _ in range(2):
            tf.data.Dataset.from_tensor_slices(_X[:4]).batch(2)
        with _EagerOps() as ops:
            tf.data.Dataset.from_tensor_slices(_X[:4]).batch(2)
        assert _DATASET_OPS <= set(ops.types), ops.types
    finally:
        done.set()
        holder.join()


def _elements(dataset):
    return [tf.nest.map_structure(lambda t: t.numpy(), e) for e in dataset]


@st.composite
def _pipelines(draw):
    """A function making a pipeline of the routed makers over fresh tensors."""
    rows = draw(st.integers(1, 12))
    dtype = draw(st.sampled_from([np.float32, np.int64, np.bool_, np.uint8]))
    steps = draw(
        st.lists(
            st.sampled_from(
                ["batch", "padded", "take", "skip", "repeat", "prefetch", "zip", "concat", "shard"]
            ),
            max_size=3,
        )
    )
    sizes = [draw(st.integers(0, 5)) for _ in steps]
    drop = draw(st.booleans())
    source = draw(st.sampled_from(["slices", "tensors", "range"]))

    def make(offset):
        values = ((np.arange(rows * 2) + offset) % 5).reshape(rows, 2).astype(dtype)
        if source == "slices":
            dataset = tf.data.Dataset.from_tensor_slices({"x": values, "i": np.arange(rows)})
        elif source == "tensors":
            dataset = tf.data.Dataset.from_tensors({"x": values, "i": np.arange(rows)})
        else:
            dataset = tf.data.Dataset.range(offset, offset + rows)
        for step, size in zip(steps, sizes, strict=True):
            if step == "batch":
                dataset = dataset.batch(size + 1, drop_remainder=drop)
            elif step == "padded":
                dataset = dataset.padded_batch(size + 1, drop_remainder=drop)
            elif step == "take":
                dataset = dataset.take(size)
            elif step == "skip":
                dataset = dataset.skip(size)
            elif step == "repeat":
                dataset = dataset.repeat(size % 3)
            elif step == "prefetch":
                dataset = dataset.prefetch(size)
            elif step == "zip":
                dataset = tf.data.Dataset.zip((dataset, dataset))
            elif step == "concat":
                dataset = dataset.concatenate(dataset)
            else:
                dataset = dataset.shard(size + 1, size // 2)
        return dataset

    return make


def _assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        tf.nest.assert_same_structure(g, w)
        for gv, wv in zip(tf.nest.flatten(g), tf.nest.flatten(w), strict=True):
            assert gv.dtype == wv.dtype and gv.shape == wv.shape
            np.testing.assert_array_equal(gv, wv)


@given(make=_pipelines())
def test_routed_makers_make_tensorflows_datasets(make):
    """Property: every call, traced or not, gives TensorFlow's own elements and specs."""
    for offset in range(3):
        want = make(offset)
        with eager_dataset_ops.cached_dataset_ops(single_threaded=True):
            got = make(offset)
        assert got.element_spec == want.element_spec
        assert int(got.cardinality()) == int(want.cardinality())
        _assert_same(_elements(got), _elements(want))


def test_a_routed_maker_raises_tensorflows_error():
    def make(size):
        return tf.data.Dataset.range(4).batch(size)

    with pytest.raises(tf.errors.InvalidArgumentError) as want:
        make(0)
    with eager_dataset_ops.cached_dataset_ops(single_threaded=True):
        make(2)
        make(2)
        with pytest.raises(tf.errors.InvalidArgumentError) as got:
            make(0)
    assert str(got.value) == str(want.value)


def test_a_small_inputs_iterator_is_made_on_one_thread(trained, monkeypatch):
    """The traced call making a small input's iterator runs on the single-threaded executor."""
    from keras_estimator._src.tf_internals import function_calls

    calls = []
    call_traced = function_calls.call_traced

    def recording(concrete, *args, single_threaded=False):
        calls.append((args, single_threaded))
        return call_traced(concrete, *args, single_threaded=single_threaded)

    monkeypatch.setattr(function_calls, "call_traced", recording)
    predictions = list(trained.predict(_predict_input_fn))
    made = [threaded for args, threaded in calls if isinstance(args[0], tf.data.Dataset)]
    assert made == [True]
    assert len(predictions) == 3
