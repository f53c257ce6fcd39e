"""Tests for keras_estimator.compat.layers, the tf.compat.v1.layers stand-in.

Variable names are what TF 2.15's `tf.compat.v1.layers` produced (checked
against it), since TF1 checkpoints are keyed by them.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import tensorflow as tf

from keras_estimator.compat import layers

GraphKeys = tf.compat.v1.GraphKeys


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        # Random ops need a seed: tests/conftest.py enables op determinism.
        tf.compat.v1.set_random_seed(0)
        yield g


def _names(variables=None):
    if variables is None:
        variables = tf.compat.v1.global_variables()
    return [v.name for v in variables]


def _run(fetches, feed_dict=None, assign=None):
    """Initializes the graph's variables (then `assign`s), runs `fetches`."""
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        for variable, value in (assign or {}).items():
            variable.load(value, sess)
        return sess.run(fetches, feed_dict)


def _variable(name):
    (found,) = [v for v in tf.compat.v1.global_variables() if v.name == name]
    return found


# ---- variable names ----------------------------------------------------------
def test_dense_names_are_tf1_names(graph):
    x = tf.zeros([2, 3])
    layers.dense(x, 4)
    layers.dense(x, 2, use_bias=False)
    layers.dense(x, 1, name="logits")
    assert _names() == [
        "dense/kernel:0",
        "dense/bias:0",
        "dense_1/kernel:0",
        "logits/kernel:0",
        "logits/bias:0",
    ]
    assert _names(tf.compat.v1.trainable_variables()) == _names()


def test_conv_and_pooling_names(graph):
    image = tf.zeros([1, 8, 8, 3])
    sequence = tf.zeros([1, 8, 3])
    layers.conv2d(image, 4, 3)
    layers.max_pooling2d(image, 2, 2)
    layers.conv2d(image, 4, 3)
    layers.conv1d(sequence, 2, 3)
    layers.conv1d(sequence, 2, 3, name="temporal")
    assert _names() == [
        "conv2d/kernel:0",
        "conv2d/bias:0",
        "conv2d_1/kernel:0",
        "conv2d_1/bias:0",
        "conv1d/kernel:0",
        "conv1d/bias:0",
        "temporal/kernel:0",
        "temporal/bias:0",
    ]
    assert _variable("conv2d/kernel:0").shape == (3, 3, 3, 4)
    assert _variable("conv1d/kernel:0").shape == (3, 3, 2)


def test_names_inside_outer_variable_scope_and_reentry_with_reuse(graph):
    x = tf.zeros([2, 3])
    with tf.compat.v1.variable_scope("model"):
        layers.dense(x, 2)
        layers.dense(x, 2)
    with tf.compat.v1.variable_scope("model", reuse=True):
        layers.dense(x, 2)
        layers.dense(x, 2)
    assert _names() == [
        "model/dense/kernel:0",
        "model/dense/bias:0",
        "model/dense_1/kernel:0",
        "model/dense_1/bias:0",
    ]


def test_batch_normalization_variables(graph):
    layers.batch_normalization(tf.zeros([4, 3]), training=True)
    assert _names() == [
        "batch_normalization/gamma:0",
        "batch_normalization/beta:0",
        "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0",
    ]
    assert _names(tf.compat.v1.trainable_variables()) == [
        "batch_normalization/gamma:0",
        "batch_normalization/beta:0",
    ]
    assert len(tf.compat.v1.get_collection(GraphKeys.UPDATE_OPS)) == 2


def test_batch_normalization_inference_adds_no_update_ops(graph):
    layers.batch_normalization(tf.zeros([4, 3]), training=False, center=False)
    layers.batch_normalization(tf.zeros([4, 3]), scale=False)
    assert tf.compat.v1.get_collection(GraphKeys.UPDATE_OPS) == []
    assert _names() == [
        "batch_normalization/gamma:0",
        "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0",
        "batch_normalization_1/beta:0",
        "batch_normalization_1/moving_mean:0",
        "batch_normalization_1/moving_variance:0",
    ]


# ---- reuse -------------------------------------------------------------------
def test_reuse_true_shares_variables(graph):
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    first = layers.dense(x, 2, name="shared")
    second = layers.dense(x, 2, name="shared", reuse=True)
    auto_1 = layers.dense(x, 2, name="auto", reuse=tf.compat.v1.AUTO_REUSE)
    auto_2 = layers.dense(x, 2, name="auto", reuse=tf.compat.v1.AUTO_REUSE)
    layers.dense(x, 2)
    unnamed_again = layers.dense(x, 2, reuse=True)  # reuses `dense`, as TF1 did
    assert _names() == [
        "shared/kernel:0",
        "shared/bias:0",
        "auto/kernel:0",
        "auto/bias:0",
        "dense/kernel:0",
        "dense/bias:0",
    ]
    a, b, c, d = _run([first, second, auto_1, auto_2])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(c, d)
    assert unnamed_again.shape == (2, 2)


def test_same_name_without_reuse_fails_like_tf1(graph):
    x = tf.zeros([2, 3])
    layers.dense(x, 2, name="logits")
    with pytest.raises(ValueError, match="logits/kernel already exists"):
        layers.dense(x, 2, name="logits")


# ---- dense -------------------------------------------------------------------
def test_dense_matches_numpy(graph):
    rng = np.random.default_rng(0)
    x_value = rng.standard_normal((5, 3)).astype(np.float32)
    kernel = rng.standard_normal((3, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    linear = layers.dense(tf.constant(x_value), 4)
    relu = layers.dense(tf.constant(x_value), 4, activation=tf.nn.relu, name="r")
    assign = {
        _variable("dense/kernel:0"): kernel,
        _variable("dense/bias:0"): bias,
        _variable("r/kernel:0"): kernel,
        _variable("r/bias:0"): bias,
    }
    linear_value, relu_value = _run([linear, relu], assign=assign)
    expected = x_value @ kernel + bias
    np.testing.assert_allclose(linear_value, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        relu_value, np.maximum(expected, 0), rtol=1e-5, atol=1e-5
    )


def test_dense_initializers_and_higher_rank_inputs(graph):
    x = tf.ones([2, 5, 3])
    out = layers.dense(
        x,
        4,
        kernel_initializer=tf.compat.v1.constant_initializer(0.5),
        bias_initializer=tf.compat.v1.constant_initializer(1.0),
    )
    assert out.shape == (2, 5, 4)
    np.testing.assert_allclose(_run(out), np.full((2, 5, 4), 2.5))


def test_default_kernel_initializer_is_glorot_uniform(graph):
    layers.dense(tf.zeros([1, 30]), 20)
    kernel, bias = _run([_variable("dense/kernel:0"), _variable("dense/bias:0")])
    limit = np.sqrt(6.0 / (30 + 20))
    assert np.abs(kernel).max() <= limit
    assert np.abs(kernel).max() > limit / 2
    np.testing.assert_array_equal(bias, np.zeros(20))


def test_regularization_losses_added_once_per_variable(graph):
    x = tf.ones([4, 2])

    def l2(weights):
        return 0.5 * tf.reduce_sum(tf.square(weights))

    layers.dense(
        x,
        3,
        name="reg",
        kernel_initializer=tf.compat.v1.ones_initializer(),
        kernel_regularizer=l2,
        activity_regularizer=tf.reduce_sum,
    )
    layers.dense(x, 3, name="reg", reuse=True, kernel_regularizer=l2)
    losses = tf.compat.v1.get_collection(GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 2
    kernel_loss, activity_loss = _run(losses)
    assert kernel_loss == pytest.approx(3.0)  # 0.5 * 6 ones
    assert activity_loss == pytest.approx(4 * 3 * 2.0 / 4)  # sum / batch size


def test_trainable_false(graph):
    layers.dense(tf.zeros([1, 2]), 2, trainable=False)
    assert tf.compat.v1.trainable_variables() == []
    assert len(tf.compat.v1.global_variables()) == 2


# ---- convolutions ------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "expected_shape"),
    [
        ({"padding": "valid"}, (2, 6, 8, 4)),
        ({"padding": "SAME"}, (2, 8, 10, 4)),
        ({"padding": "same", "strides": 2}, (2, 4, 5, 4)),
        ({"padding": "valid", "dilation_rate": 2}, (2, 4, 6, 4)),
        ({"padding": "valid", "data_format": "channels_first"}, (2, 4, 6, 8)),
    ],
)
def test_conv2d_output_shapes(graph, kwargs, expected_shape):
    if kwargs.get("data_format") == "channels_first":
        image = tf.zeros([2, 3, 8, 10])
    else:
        image = tf.zeros([2, 8, 10, 3])
    out = layers.conv2d(image, 4, 3, **kwargs)
    assert tuple(out.shape) == expected_shape
    assert _run(out).shape == expected_shape


def test_conv2d_channels_first_matches_channels_last(graph):
    rng = np.random.default_rng(1)
    image = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)
    kernel = rng.standard_normal((3, 2, 3, 4)).astype(np.float32)
    last = layers.conv2d(tf.constant(image), 4, (3, 2), padding="same")
    first = layers.conv2d(
        tf.constant(image.transpose(0, 3, 1, 2)),
        4,
        (3, 2),
        padding="same",
        data_format="channels_first",
    )
    assign = {
        _variable("conv2d/kernel:0"): kernel,
        _variable("conv2d_1/kernel:0"): kernel,
    }
    last_value, first_value = _run([last, first], assign=assign)
    np.testing.assert_allclose(first_value, last_value.transpose(0, 3, 1, 2), atol=1e-5)


def test_conv1d_matches_numpy(graph):
    rng = np.random.default_rng(2)
    sequence = rng.standard_normal((1, 6, 2)).astype(np.float32)
    kernel = rng.standard_normal((3, 2, 1)).astype(np.float32)
    out = layers.conv1d(tf.constant(sequence), 1, 3, use_bias=False)
    causal = layers.conv1d(tf.constant(sequence), 1, 3, padding="causal", name="c")
    assign = {_variable("conv1d/kernel:0"): kernel, _variable("c/kernel:0"): kernel}
    value, causal_value = _run([out, causal], assign=assign)
    expected = np.stack(
        [np.sum(sequence[0, i : i + 3] * kernel[:, :, 0]) for i in range(4)]
    )
    np.testing.assert_allclose(value[0, :, 0], expected, rtol=1e-5, atol=1e-5)
    assert causal_value.shape == (1, 6, 1)
    np.testing.assert_allclose(causal_value[0, 2:, 0], expected, rtol=1e-5, atol=1e-5)


# ---- pooling, flatten, dropout -----------------------------------------------
def test_pooling_shapes_and_values(graph):
    values = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3)
    image = tf.constant(values)
    outputs = {
        "max": layers.max_pooling2d(image, 2, 2),
        "avg": layers.average_pooling2d(image, 2, 2),
        "same": layers.max_pooling2d(image, 3, 2, padding="same"),
        "first": layers.max_pooling2d(
            tf.constant(values.transpose(0, 3, 1, 2)),
            2,
            2,
            data_format="channels_first",
        ),
        "max1d": layers.max_pooling1d(image[:, 0], 2, 2),
        "avg1d": layers.average_pooling1d(image[:, 0], 3, 1, padding="same"),
        "avg1d_first": layers.average_pooling1d(
            tf.transpose(image[:, 0], [0, 2, 1]), 2, 2, data_format="channels_first"
        ),
    }
    assert tf.compat.v1.global_variables() == []
    result = _run(outputs)
    blocks = values.reshape(2, 2, 2, 3, 2, 3)
    np.testing.assert_array_equal(result["max"], blocks.max(axis=(2, 4)))
    np.testing.assert_allclose(result["avg"], blocks.mean(axis=(2, 4)))
    assert result["same"].shape == (2, 2, 3, 3)
    np.testing.assert_array_equal(result["first"], result["max"].transpose(0, 3, 1, 2))
    assert result["max1d"].shape == (2, 3, 3)
    assert result["avg1d"].shape == (2, 6, 3)
    assert result["avg1d_first"].shape == (2, 3, 3)


def test_flatten_keeps_batch_dimension(graph):
    values = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    flat = layers.flatten(tf.constant(values))
    first = layers.flatten(
        tf.constant(values.transpose(0, 3, 1, 2)), data_format="channels_first"
    )
    unknown_batch = layers.flatten(tf.compat.v1.placeholder(tf.float32, [None, 3, 4]))
    assert flat.shape == (2, 60)
    assert unknown_batch.shape.as_list() == [None, 12]
    flat_value, first_value = _run([flat, first])
    np.testing.assert_array_equal(flat_value, values.reshape(2, 60))
    np.testing.assert_array_equal(first_value, flat_value)


def test_dropout_inference_is_identity(graph):
    x = tf.ones([10, 10])
    out = layers.dropout(x, rate=0.5)  # training defaults to False
    off = layers.dropout(x, rate=0.5, training=tf.constant(False))
    np.testing.assert_array_equal(_run(out), np.ones([10, 10]))
    np.testing.assert_array_equal(_run(off), np.ones([10, 10]))


@pytest.mark.parametrize("training_is_tensor", [False, True])
def test_dropout_training_drops_rate_and_scales(graph, training_is_tensor):
    rate = 0.25
    training = (
        tf.compat.v1.placeholder_with_default(True, []) if training_is_tensor else True
    )
    out = layers.dropout(tf.ones([200, 100]), rate=rate, seed=3, training=training)
    value = _run(out)
    dropped = np.mean(value == 0)
    assert abs(dropped - rate) < 0.02
    np.testing.assert_allclose(value[value != 0], 1.0 / (1.0 - rate), rtol=1e-6)
    if training_is_tensor:
        np.testing.assert_array_equal(
            _run(out, feed_dict={training: False}), np.ones([200, 100])
        )


# ---- batch normalization -----------------------------------------------------
def test_batch_normalization_training_normalizes_and_updates(graph):
    rng = np.random.default_rng(3)
    values = (rng.standard_normal((64, 3)) * [1.0, 4.0, 0.5] + [5.0, -2.0, 1.0]).astype(
        np.float32
    )
    momentum = 0.9
    out = layers.batch_normalization(
        tf.constant(values), momentum=momentum, training=True
    )
    update_ops = tf.compat.v1.get_collection(GraphKeys.UPDATE_OPS)
    moving_mean = _variable("batch_normalization/moving_mean:0")
    moving_variance = _variable("batch_normalization/moving_variance:0")
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        normalized = sess.run(out)
        sess.run(update_ops)
        mean_value, variance_value = sess.run([moving_mean, moving_variance])
    np.testing.assert_allclose(normalized.mean(axis=0), 0.0, atol=1e-4)
    np.testing.assert_allclose(normalized.var(axis=0), 1.0, atol=0.01)
    # moving -= (moving - batch) * (1 - momentum), from 0 and 1.
    np.testing.assert_allclose(
        mean_value, (1 - momentum) * values.mean(axis=0), rtol=1e-4
    )
    np.testing.assert_allclose(
        variance_value,
        momentum + (1 - momentum) * values.var(axis=0),
        rtol=1e-4,
    )


def test_batch_normalization_inference_uses_moving_statistics(graph):
    values = np.array([[1.0, 2.0], [3.0, 6.0]], np.float32)
    out = layers.batch_normalization(tf.constant(values), epsilon=0.0)
    assign = {
        _variable("batch_normalization/moving_mean:0"): [1.0, 2.0],
        _variable("batch_normalization/moving_variance:0"): [4.0, 16.0],
    }
    np.testing.assert_allclose(
        _run(out, assign=assign), [[0.0, 0.0], [1.0, 1.0]], atol=1e-6
    )


def test_batch_normalization_training_tensor(graph):
    training = tf.compat.v1.placeholder_with_default(False, [])
    values = np.array([[1.0], [3.0]], np.float32)
    out = layers.batch_normalization(tf.constant(values), training=training)
    update_ops = tf.compat.v1.get_collection(GraphKeys.UPDATE_OPS)
    assert len(update_ops) == 2
    moving_mean = _variable("batch_normalization/moving_mean:0")
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        inference, _ = sess.run([out, update_ops])
        assert sess.run(moving_mean) == pytest.approx([0.0])
        trained, _ = sess.run([out, update_ops], {training: True})
        assert sess.run(moving_mean) == pytest.approx([0.01 * 2.0])
    np.testing.assert_allclose(inference, values / np.sqrt(1.001), rtol=1e-5)
    np.testing.assert_allclose(trained[:, 0], [-1.0, 1.0], atol=1e-3)


def test_batch_normalization_channels_first_axis(graph):
    out = layers.batch_normalization(tf.ones([2, 3, 4, 4]), axis=1, training=True)
    assert out.shape == (2, 3, 4, 4)
    assert _variable("batch_normalization/gamma:0").shape == (3,)


# ---- tracing -----------------------------------------------------------------
def _l2(weights):
    return 0.5 * tf.reduce_sum(tf.square(weights))


def _model_fn(features):
    net = layers.conv2d(features, 4, 3, padding="same", activation=tf.nn.relu)
    net = layers.batch_normalization(net, training=True)
    net = layers.max_pooling2d(net, 2, 2)
    net = layers.flatten(net)
    net = layers.dropout(net, 0.5, training=True)
    net = layers.dense(net, 8, kernel_regularizer=_l2)
    return layers.dense(net, 2, name="logits")


_MODEL_VARIABLES = [
    "conv2d/kernel",
    "conv2d/bias",
    "batch_normalization/gamma",
    "batch_normalization/beta",
    "batch_normalization/moving_mean",
    "batch_normalization/moving_variance",
    "dense/kernel",
    "dense/bias",
    "logits/kernel",
    "logits/bias",
]


@contextlib.contextmanager
def _fresh_variable_scopes():
    """Gives a trace its own TF1 variable-scope counters, as the estimator does.

    TF2 traces share the collections where `variable_scope` counts default
    names and `get_variable` keeps its table with the outer graph, so without
    this a second trace would name its layers `dense_1`, `dense_2`, ...
    """
    saved = {}
    for key in (("__varscope",), ("__variable_store",)):
        stores = tf.compat.v1.get_collection_ref(key)
        saved[key] = list(stores)
        del stores[:]
    try:
        yield
    finally:
        for key, content in saved.items():
            tf.compat.v1.get_collection_ref(key)[:] = content


def test_names_inside_tf_function_traces():
    """Each trace asks for the same TF1 names and collects the same losses."""
    tf.random.set_seed(0)
    variables = {}
    traces = []

    def creator(next_creator, **kwargs):
        name = kwargs["name"]
        traces[-1]["names"].append(name)
        if name not in variables:  # created on the first trace only
            variables[name] = next_creator(**kwargs)
        return variables[name]

    @tf.function
    def step(features):
        traces.append({"names": []})
        with _fresh_variable_scopes(), tf.variable_creator_scope(creator):
            logits = _model_fn(features)
        traces[-1]["update_ops"] = tf.compat.v1.get_collection(GraphKeys.UPDATE_OPS)
        traces[-1]["losses"] = [
            loss.name
            for loss in tf.compat.v1.get_collection(GraphKeys.REGULARIZATION_LOSSES)
        ]
        with tf.control_dependencies(traces[-1]["update_ops"]):
            return tf.identity(logits)

    assert step(tf.ones([2, 8, 8, 3])).shape == (2, 2)
    assert step(tf.ones([3, 8, 8, 3])).shape == (3, 2)  # a retrace
    assert len(traces) >= 2
    for trace in traces:
        assert trace["names"] == _MODEL_VARIABLES
        assert len(trace["update_ops"]) == 2
        assert trace["losses"] == ["dense/kernel/Regularizer/mul:0"]
    assert [v.name for v in variables.values()] == [n + ":0" for n in _MODEL_VARIABLES]
    moving_mean = variables["batch_normalization/moving_mean"].numpy()
    assert np.any(moving_mean != 0)  # the update ops ran


def test_names_inside_wrap_function():
    tf.random.set_seed(0)
    wrapped = tf.compat.v1.wrap_function(_model_fn, [tf.TensorSpec([None, 8, 8, 3])])
    assert sorted(v.name for v in wrapped.variables) == sorted(
        n + ":0" for n in _MODEL_VARIABLES
    )
    assert wrapped(tf.ones([2, 8, 8, 3])).shape == (2, 2)


# ---- errors ------------------------------------------------------------------
def test_bad_padding_names_value_and_choices(graph):
    image = tf.zeros([1, 4, 4, 1])
    with pytest.raises(
        ValueError, match=r"`padding` must be one of 'valid' or 'same'.*'full'"
    ):
        layers.conv2d(image, 1, 2, padding="full")
    with pytest.raises(ValueError, match=r"'valid' or 'same'.*'causal'"):
        layers.max_pooling2d(image, 2, 2, padding="causal")
    with pytest.raises(ValueError, match=r"'valid' or 'same' or 'causal'.*'full'"):
        layers.conv1d(tf.zeros([1, 4, 1]), 1, 2, padding="full")


def test_bad_data_format(graph):
    image = tf.zeros([1, 4, 4, 1])
    with pytest.raises(
        ValueError,
        match=r"`data_format` must be 'channels_last' or 'channels_first'.*'NHWC'",
    ):
        layers.conv2d(image, 1, 2, data_format="NHWC")
    with pytest.raises(ValueError, match=r"data_format=.*'nchw'"):
        layers.flatten(image, data_format="nchw")


def test_bad_input_rank(graph):
    with pytest.raises(ValueError, match=r"rank 4"):
        layers.conv2d(tf.zeros([4, 4, 1]), 1, 2)


def test_eager_call_raises_clear_error():
    assert tf.executing_eagerly()
    with pytest.raises(RuntimeError, match="inside a model_fn"):
        layers.dense(tf.ones([1, 2]), 2)
