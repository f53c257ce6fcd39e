"""input_fn return values of every shape: training runs or fails clearly.

Hypothesis picks what input_fn returns (datasets of nested dicts and tuples,
bool/string/int64/float16/uint8 features, ragged and sparse tensors, empty
datasets, datasets of scalars, 3-tuples, None, Python lists, numpy arrays,
tensors). train(steps=2) then evaluate(steps=2) either run or raise
ValueError / TypeError / NotImplementedError naming input_fn, features or
labels; never a TensorFlow error from inside, never a hang. Each draw builds
a new Estimator (a new input structure is a new trace), so the property is
in the slow set; one draw of each kind of failure runs in CI.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from tests.fuzz._bounded import succeeds_or_fails_clearly


def model_fn(features, labels, mode):
    # Any structure: the loss reads every numeric dense tensor it is given.
    w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.ones_initializer())
    parts = [
        tf.reduce_sum(tf.cast(t, tf.float32))
        for t in tf.nest.flatten([features, labels])
        if isinstance(t, tf.Tensor)
        and (t.dtype.is_floating or t.dtype.is_integer or t.dtype.is_bool)
    ]
    total = tf.add_n(parts) if parts else tf.constant(0.0)
    loss = tf.square(w - 1e-3 * total)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _slices(*parts):
    return lambda: tf.data.Dataset.from_tensor_slices(
        parts[0] if len(parts) == 1 else parts
    ).batch(2)


ONES = np.ones([4, 2], np.float32)
LABELS = np.ones([4], np.int64)
RETURNS = {
    "dataset (dict, labels)": _slices({"x": ONES}, LABELS),
    "dataset of features": _slices({"x": ONES}),
    "dataset of a tensor": _slices(ONES),
    "dataset 3-tuple": _slices(ONES, LABELS, LABELS),
    "dataset of scalars": lambda: tf.data.Dataset.range(4),
    "empty dataset": _slices({"x": ONES[:0]}, LABELS[:0]),
    "bool features": _slices({"x": ONES.astype(bool)}, LABELS),
    "string features": _slices({"x": np.array(["a"] * 4)}, LABELS),
    "float16": _slices({"x": ONES.astype(np.float16)}, LABELS.astype(np.float16)),
    "uint8": _slices({"x": ONES.astype(np.uint8)}, LABELS.astype(np.uint8)),
    "nested dict": _slices({"a": {"b": ONES}, "c": LABELS}, LABELS),
    "tuple features": _slices((ONES, LABELS), LABELS),
    "dict labels": _slices({"x": ONES}, {"y": LABELS}),
    "ragged": _slices(
        {"x": tf.ragged.constant([[1.0], [1.0, 2.0], [3.0], []])}, LABELS
    ),
    "sparse": _slices({"x": tf.sparse.from_dense(ONES)}, LABELS),
    "1-tuple dataset": _slices(({"x": ONES},)),
    "tensors (dict, labels)": lambda: ({"x": tf.ones([2, 2])}, tf.ones([2])),
    "tensor": lambda: tf.ones([2, 2]),
    "3-tuple of tensors": lambda: (tf.ones([2, 2]), tf.ones([2]), tf.ones([2])),
    "numpy (dict, labels)": lambda: ({"x": np.ones([2, 2], np.float32)}, np.ones([2])),
    "numpy array": lambda: np.ones([2, 2], np.float32),
    "None": lambda: None,
    "list of tensors": lambda: [tf.ones([2, 2]), tf.ones([2])],
    "python list": lambda: [[1.0, 2.0]],
    "int": lambda: 3,
    "(None, None)": lambda: (None, None),
    "(dict, None)": lambda: ({"x": tf.ones([2, 2])}, None),
}
NAMES = ["input_fn", "features", "labels", "dataset"]


def _train_and_evaluate(tmp_path, returned):
    estimator = ke.Estimator(model_fn, model_dir=str(tmp_path))

    def call():
        estimator.train(RETURNS[returned], steps=2)
        return estimator.evaluate(RETURNS[returned], steps=2)

    return succeeds_or_fails_clearly(call, NAMES)


@pytest.mark.slow
@given(st.sampled_from(sorted(RETURNS)))
def test_input_fn_returns_train_or_fail_clearly(tmp_path_factory, returned):
    _train_and_evaluate(tmp_path_factory.mktemp("input"), returned)


@pytest.mark.parametrize(
    "returned", ["dataset 3-tuple", "None", "(None, None)", "sparse", "empty dataset"]
)
def test_input_fn_return_kinds(tmp_path, returned):
    _train_and_evaluate(tmp_path, returned)
