"""Tests for the layer classes of keras_estimator.compat.layers and the
functions added with them (3D, transposed and separable convolutions, 3D
pooling).

Variable names and shapes are TF 2.15's `tf.compat.v1.layers` ones (its docs
and sources: e.g. a transposed kernel is `[*kernel_size, filters, in]`, a
depthwise kernel `[*kernel_size, in, depth_multiplier]`); values are checked
against numpy or against `tf.nn` ops the layers do not use.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator.compat import layers
from tests._models import input_fn, make_data

GraphKeys = tf.compat.v1.GraphKeys


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        tf.compat.v1.set_random_seed(0)
        yield g


def _shapes(variables=None):
    if variables is None:
        variables = tf.compat.v1.global_variables()
    return {v.name: tuple(v.shape) for v in variables}


def _run(fetches, feed_dict=None, assign=None):
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        for variable, value in (assign or {}).items():
            variable.load(value, sess)
        return sess.run(fetches, feed_dict)


def _random(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---- names and shapes: class and function alike -------------------------------
# (class, function, positional args, keyword args, input shape, variables)
_LAYERS = [
    (layers.Dense, layers.dense, (4,), {}, (2, 3),
     {"dense/kernel:0": (3, 4), "dense/bias:0": (4,)}),
    (layers.Conv1D, layers.conv1d, (2, 3), {}, (1, 8, 3),
     {"conv1d/kernel:0": (3, 3, 2), "conv1d/bias:0": (2,)}),
    (layers.Conv2D, layers.conv2d, (4, 3), {}, (1, 8, 8, 3),
     {"conv2d/kernel:0": (3, 3, 3, 4), "conv2d/bias:0": (4,)}),
    (layers.Conv3D, layers.conv3d, (4, (2, 3, 3)), {}, (1, 4, 6, 6, 3),
     {"conv3d/kernel:0": (2, 3, 3, 3, 4), "conv3d/bias:0": (4,)}),
    (layers.Conv2DTranspose, layers.conv2d_transpose, (4, 3), {}, (1, 5, 5, 3),
     {"conv2d_transpose/kernel:0": (3, 3, 4, 3), "conv2d_transpose/bias:0": (4,)}),
    (layers.Conv3DTranspose, layers.conv3d_transpose, (4, 2), {}, (1, 3, 3, 3, 2),
     {"conv3d_transpose/kernel:0": (2, 2, 2, 4, 2),
      "conv3d_transpose/bias:0": (4,)}),
    (layers.SeparableConv1D, layers.separable_conv1d, (5, 3),
     {"depth_multiplier": 2}, (1, 8, 3),
     {"separable_conv1d/depthwise_kernel:0": (3, 3, 2),
      "separable_conv1d/pointwise_kernel:0": (1, 6, 5),
      "separable_conv1d/bias:0": (5,)}),
    (layers.SeparableConv2D, layers.separable_conv2d, (5, 3),
     {"depth_multiplier": 2}, (1, 8, 8, 3),
     {"separable_conv2d/depthwise_kernel:0": (3, 3, 3, 2),
      "separable_conv2d/pointwise_kernel:0": (1, 1, 6, 5),
      "separable_conv2d/bias:0": (5,)}),
    (layers.BatchNormalization, layers.batch_normalization, (), {}, (4, 3),
     {f"batch_normalization/{n}:0": (3,)
      for n in ("gamma", "beta", "moving_mean", "moving_variance")}),
    (layers.MaxPooling3D, layers.max_pooling3d, (2, 2), {}, (1, 4, 4, 4, 2), {}),
    (layers.AveragePooling3D, layers.average_pooling3d, (2, 2), {}, (1, 4, 4, 4, 2),
     {}),
    (layers.Dropout, layers.dropout, (), {}, (2, 3), {}),
    (layers.Flatten, layers.flatten, (), {}, (2, 3, 4), {}),
]  # fmt: skip
_IDS = [entry[0].__name__ for entry in _LAYERS]


@pytest.mark.parametrize(
    ("cls", "function", "args", "kwargs", "input_shape", "expected"), _LAYERS, ids=_IDS
)
def test_class_and_function_make_tf1_names_and_shapes(
    cls, function, args, kwargs, input_shape, expected
):
    results = []
    for build in (
        lambda x: cls(*args, **kwargs)(x),
        lambda x: function(x, *args, **kwargs),
    ):
        with tf.Graph().as_default():
            tf.compat.v1.set_random_seed(0)
            outputs = build(tf.ones(input_shape))
            results.append((_shapes(), outputs.shape.as_list(), _op_types()))
    (class_vars, class_shape, class_ops), (fn_vars, fn_shape, fn_ops) = results
    assert class_vars == expected
    assert fn_vars == expected
    assert class_shape == fn_shape
    assert class_ops == fn_ops  # the same graph, op for op


def _op_types():
    return [op.type for op in tf.compat.v1.get_default_graph().get_operations()]


def test_layer_attributes_name_the_variables(graph):
    image = tf.ones([1, 6, 6, 3])
    conv = layers.Conv2DTranspose(4, 3)
    separable = layers.SeparableConv2D(5, 3)
    norm = layers.BatchNormalization(name="bn")
    assert not conv.built and conv.weights == []
    conv(image)
    separable(image)
    norm(image)
    assert conv.built
    assert conv.kernel.name == "conv2d_transpose/kernel:0"
    assert conv.bias.name == "conv2d_transpose/bias:0"
    assert separable.depthwise_kernel.name == "separable_conv2d/depthwise_kernel:0"
    assert separable.pointwise_kernel.name == "separable_conv2d/pointwise_kernel:0"
    assert [norm.gamma.name, norm.beta.name] == ["bn/gamma:0", "bn/beta:0"]
    assert norm.trainable_weights == norm.trainable_variables == [norm.gamma, norm.beta]
    assert norm.non_trainable_weights == [norm.moving_mean, norm.moving_variance]
    assert (
        norm.weights
        == norm.variables
        == [
            norm.gamma,
            norm.beta,
            norm.moving_mean,
            norm.moving_variance,
        ]
    )
    assert norm.non_trainable_variables == norm.non_trainable_weights
    assert (conv.name, norm.name, norm.scope_name) == ("conv2d_transpose", "bn", "bn")


def test_unnamed_and_named_objects_get_unique_scopes(graph):
    x = tf.ones([2, 3])
    unnamed = [layers.Dense(2), layers.Dense(2)]
    named = [layers.Dense(2, name="logits"), layers.Dense(2, name="logits")]
    for layer in unnamed + named:
        layer(x)
    assert [layer.scope_name for layer in unnamed + named] == [
        "dense",
        "dense_1",
        "logits",
        "logits_1",
    ]
    assert [layer.name for layer in unnamed + named] == [
        "dense",
        "dense_1",
        "logits",
        "logits",
    ]
    layers.dense(x, 2)  # the functional form counts the same way
    assert "dense_2/kernel:0" in _shapes()


def test_calling_an_object_twice_reuses_its_variables(graph):
    x_value = _random((2, 3))
    layer = layers.Dense(4, activation=tf.nn.relu)
    first = layer(tf.constant(x_value))
    count = len(tf.compat.v1.global_variables())
    kernel = layer.kernel
    second = layer.apply(tf.constant(x_value))
    assert len(tf.compat.v1.global_variables()) == count == 2
    assert layer.kernel is kernel and len(layer.weights) == 2
    a, b = _run([first, second])
    np.testing.assert_array_equal(a, b)


def test_object_built_in_an_outer_scope_reenters_its_own(graph):
    layer = layers.Dense(2)
    with tf.compat.v1.variable_scope("tower"):
        layer(tf.ones([1, 3]))
    with tf.compat.v1.variable_scope("other"):
        layer(tf.ones([1, 3]))
    assert list(_shapes()) == ["tower/dense/kernel:0", "tower/dense/bias:0"]


def test_second_call_with_other_input_size_is_refused(graph):
    layer = layers.Dense(2)
    layer(tf.ones([1, 3]))
    with pytest.raises(ValueError, match=r"axis -1 .* size 3.*shape \(1, 5\)"):
        layer(tf.ones([1, 5]))


# ---- numerics ----------------------------------------------------------------
def test_dense_class_matches_numpy(graph):
    x_value, kernel = _random((5, 3)), _random((3, 4), 1)
    layer = layers.Dense(4, use_bias=False, activation="relu")
    out = layer(tf.constant(x_value))
    value = _run(out, assign={layer.kernel: kernel})
    np.testing.assert_allclose(value, np.maximum(x_value @ kernel, 0), atol=1e-5)


def _numpy_transpose_conv2d(x, kernel, stride):
    """Valid transposed convolution: each input scatters a kernel window."""
    batch, height, width, _ = x.shape
    kh, kw, filters, _ = kernel.shape
    out = np.zeros(
        (
            batch,
            height * stride + max(kh - stride, 0),
            width * stride + max(kw - stride, 0),
            filters,
        ),
        np.float32,
    )
    for i in range(height):
        for j in range(width):
            contribution = np.einsum("bc,hwfc->bhwf", x[:, i, j], kernel)
            out[:, i * stride : i * stride + kh, j * stride : j * stride + kw] += (
                contribution
            )
    return out


@pytest.mark.parametrize("stride", [1, 2, 3])
def test_conv2d_transpose_matches_numpy(graph, stride):
    x_value, kernel = _random((2, 3, 4, 3)), _random((3, 2, 5, 3), 1)
    layer = layers.Conv2DTranspose(5, (3, 2), strides=stride, use_bias=False)
    out = layer(tf.constant(x_value))
    expected = _numpy_transpose_conv2d(x_value, kernel, stride)
    assert out.shape.as_list() == list(expected.shape)
    value = _run(out, assign={layer.kernel: kernel})
    np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rank", [2, 3])
def test_same_transposed_conv_is_the_adjoint_of_tf_nn_conv(graph, rank):
    """<conv(y), x> == <y, conv_transpose(x)> for the layer's own kernel."""
    strides, spatial_in = 2, [3] * rank
    x_value = _random([1, *spatial_in, 2], 2)
    y_value = _random([1, *(size * strides for size in spatial_in), 4], 3)
    cls = layers.Conv2DTranspose if rank == 2 else layers.Conv3DTranspose
    layer = cls(4, 3, strides=strides, padding="same", use_bias=False)
    back = layer(tf.constant(x_value))
    assert back.shape.as_list() == list(y_value.shape)
    conv = tf.nn.convolution(tf.constant(y_value), layer.kernel, strides, "SAME")
    lhs, rhs = _run(
        [tf.reduce_sum(conv * x_value), tf.reduce_sum(y_value * back)],
        assign={layer.kernel: _random([3] * rank + [4, 2], 4)},
    )
    assert lhs == pytest.approx(rhs, rel=1e-4)


def test_separable_conv2d_matches_numpy(graph):
    x_value = _random((2, 5, 6, 3))
    depthwise, pointwise = _random((3, 2, 3, 2), 1), _random((1, 1, 6, 4), 2)
    layer = layers.SeparableConv2D(4, (3, 2), depth_multiplier=2, use_bias=False)
    out = layer(tf.constant(x_value))
    value = _run(
        out,
        assign={layer.depthwise_kernel: depthwise, layer.pointwise_kernel: pointwise},
    )
    # Depthwise: channel c with multiplier m gives channel c * 2 + m.
    mid = np.zeros((2, 3, 5, 3, 2), np.float32)
    for i in range(3):
        for j in range(5):
            window = x_value[:, i : i + 3, j : j + 2]  # (b, 3, 2, c)
            mid[:, i, j] = np.einsum("bhwc,hwcm->bcm", window, depthwise)
    expected = mid.reshape(2, 3, 5, 6) @ pointwise[0, 0]
    np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-4)


def test_separable_conv1d_matches_separable_conv2d_of_height_one(graph):
    x_value = _random((2, 9, 3))
    depthwise, pointwise = _random((3, 3, 2), 1), _random((1, 6, 4), 2)
    layer = layers.SeparableConv1D(4, 3, depth_multiplier=2, padding="same")
    out = layer(tf.constant(x_value))
    reference = tf.nn.depthwise_conv2d(
        tf.constant(x_value[:, None]), depthwise[None], [1, 1, 1, 1], "SAME"
    )
    reference = tf.nn.conv2d(reference, pointwise[None], 1, "VALID")[:, 0]
    assign = {layer.depthwise_kernel: depthwise, layer.pointwise_kernel: pointwise}
    value, expected = _run([out, reference], assign=assign)
    np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-5)


def test_conv3d_channels_first_matches_tf_nn(graph):
    x_value, kernel = _random((1, 4, 5, 6, 2)), _random((2, 3, 3, 2, 3), 1)
    first = layers.Conv3D(3, (2, 3, 3), data_format="channels_first", use_bias=False)
    out = first(tf.constant(x_value.transpose(0, 4, 1, 2, 3)))
    expected = tf.nn.conv3d(x_value, kernel, [1] * 5, "VALID")
    value, expected = _run([out, expected], assign={first.kernel: kernel})
    np.testing.assert_allclose(
        value, expected.transpose(0, 4, 1, 2, 3), rtol=1e-5, atol=1e-5
    )


def test_3d_pooling_matches_numpy(graph):
    values = _random((2, 4, 4, 6, 3))
    blocks = values.reshape(2, 2, 2, 2, 2, 3, 2, 3)
    result = _run(
        {
            "max": layers.MaxPooling3D(2, 2)(tf.constant(values)),
            "avg": layers.average_pooling3d(tf.constant(values), 2, 2),
            "first": layers.max_pooling3d(
                tf.constant(values.transpose(0, 4, 1, 2, 3)),
                2,
                2,
                data_format="channels_first",
            ),
        }
    )
    np.testing.assert_allclose(result["max"], blocks.max(axis=(2, 4, 6)))
    np.testing.assert_allclose(result["avg"], blocks.mean(axis=(2, 4, 6)), rtol=1e-5)
    np.testing.assert_allclose(
        result["first"], result["max"].transpose(0, 4, 1, 2, 3), rtol=1e-6
    )


# ---- training switches ---------------------------------------------------------
def test_batch_normalization_class_updates_in_training_only(graph):
    values = _random((32, 3)) * 3.0 + 1.0
    training_layer = layers.BatchNormalization(momentum=0.9)
    out = training_layer(tf.constant(values), training=True)
    inference_layer = layers.BatchNormalization()
    inference_layer(tf.constant(values), training=False)
    update_ops = tf.compat.v1.get_collection(GraphKeys.UPDATE_OPS)
    assert len(training_layer.updates) == 2
    assert update_ops == training_layer.updates
    assert inference_layer.updates == []
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        normalized, _ = sess.run([out, training_layer.updates])
        moving_mean = sess.run(training_layer.moving_mean)
    np.testing.assert_allclose(normalized.mean(axis=0), 0.0, atol=1e-4)
    np.testing.assert_allclose(moving_mean, 0.1 * values.mean(axis=0), rtol=1e-4)


def test_batch_normalization_training_tensor_selects_at_run_time(graph):
    training = tf.compat.v1.placeholder_with_default(False, [])
    values = np.array([[1.0], [3.0]], np.float32)
    layer = layers.BatchNormalization()
    out = layer(tf.constant(values), training=training)
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        inference, _ = sess.run([out, layer.updates])
        trained, _ = sess.run([out, layer.updates], {training: True})
        moving_mean = sess.run(layer.moving_mean)
    np.testing.assert_allclose(inference, values / np.sqrt(1.001), rtol=1e-5)
    np.testing.assert_allclose(trained[:, 0], [-1.0, 1.0], atol=1e-3)
    assert moving_mean == pytest.approx([0.01 * 2.0])  # one training update


def test_dropout_class_training_switch(graph):
    layer = layers.Dropout(0.25, seed=3)
    x = tf.ones([200, 100])
    on, off = _run([layer(x, training=True), layer(x)])
    assert abs(np.mean(on == 0) - 0.25) < 0.02
    np.testing.assert_allclose(on[on != 0], 1 / 0.75, rtol=1e-6)
    np.testing.assert_array_equal(off, np.ones([200, 100]))
    assert layer.weights == []


def test_flatten_class_keeps_batch(graph):
    x = tf.compat.v1.placeholder(tf.float32, [None, 3, 4])
    assert layers.Flatten()(x).shape.as_list() == [None, 12]
    first = layers.Flatten(data_format="channels_first")
    values = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    flat = _run(first(tf.constant(values)))
    np.testing.assert_array_equal(flat, values.transpose(0, 2, 3, 1).reshape(1, 24))


# ---- the Layer base class ------------------------------------------------------
class _Scale(layers.Layer):
    """A user layer: one weight per feature, made with both TF1 spellings."""

    def build(self, input_shape):
        self.factor = self.add_weight(
            "factor",
            [input_shape[-1]],
            initializer=tf.compat.v1.constant_initializer(2.0),
            regularizer=lambda w: tf.reduce_sum(w),
        )
        self.count = self.add_variable(
            "count", [], initializer=tf.compat.v1.zeros_initializer(), trainable=False
        )

    def call(self, inputs):
        self.add_update(self.count.assign_add(1.0, read_value=False))
        return inputs * self.factor


def test_layer_subclass_builds_once_and_tracks_its_state(graph):
    layer = _Scale(activity_regularizer=lambda y: tf.reduce_sum(y))
    x = tf.ones([4, 3])
    first = layer(x)
    second = layer(x)
    assert layer.name == "private__scale"  # TF1's name for a private class
    assert list(_shapes()) == ["private__scale/factor:0", "private__scale/count:0"]
    assert layer.trainable_weights == [layer.factor]
    assert layer.non_trainable_weights == [layer.count]
    # One weight loss, one activity loss per call; all in the collection too.
    assert len(layer.losses) == 3
    assert tf.compat.v1.get_collection(GraphKeys.REGULARIZATION_LOSSES) == layer.losses
    assert tf.compat.v1.get_collection(GraphKeys.UPDATE_OPS) == layer.updates
    weight_loss, activity_loss, out = _run([*layer.losses[:2], second])
    assert weight_loss == pytest.approx(6.0)
    assert activity_loss == pytest.approx(4 * 3 * 2.0 / 4)  # sum / batch size
    np.testing.assert_allclose(out, np.full([4, 3], 2.0))
    assert first.shape == second.shape


def test_untrainable_layer_lists_all_weights_as_non_trainable(graph):
    layer = layers.Dense(2, trainable=False)
    layer(tf.ones([1, 3]))
    assert layer.trainable_weights == []
    assert layer.non_trainable_weights == [layer.kernel, layer.bias]
    assert tf.compat.v1.trainable_variables() == []


def test_get_config_round_trips(graph):
    layer = layers.Conv2D(4, 3, strides=2, padding="SAME", activation="relu", name="c")
    config = layer.get_config()
    assert config["kernel_size"] == (3, 3) and config["padding"] == "same"
    clone = layers.Conv2D.from_config(config)
    assert clone.get_config() == config
    assert not clone.built
    norm = layers.BatchNormalization(axis=1, momentum=0.9)
    assert layers.BatchNormalization.from_config(norm.get_config()).momentum == 0.9
    separable = layers.SeparableConv1D(3, 2, depth_multiplier=2)
    assert "kernel_initializer" not in separable.get_config()
    assert (
        layers.SeparableConv1D.from_config(separable.get_config()).depth_multiplier == 2
    )


def test_object_made_outside_graphs_builds_again_in_each_graph():
    layer = layers.Dense(3, name="head")  # made eagerly, as at module level
    for _ in range(2):
        with tf.Graph().as_default():
            tf.compat.v1.set_random_seed(0)
            layer(tf.ones([1, 2]))
            assert list(_shapes()) == ["head/kernel:0", "head/bias:0"]
            assert layer.weights == tf.compat.v1.global_variables()


@contextlib.contextmanager
def _fresh_variable_store():
    """Gives a trace its own variable store and scope counters, as the
    estimator does (a trace otherwise shares them with the outer graph)."""
    saved = {}
    for key in (("__varscope",), ("__variable_store",)):
        saved[key] = list(tf.compat.v1.get_collection_ref(key))
        del tf.compat.v1.get_collection_ref(key)[:]
    try:
        yield
    finally:
        for key, content in saved.items():
            tf.compat.v1.get_collection_ref(key)[:] = content


def test_object_reused_across_tf_function_traces():
    """Each trace builds the objects again under the same TF1 names."""
    tf.random.set_seed(0)
    layer = layers.Conv2D(2, 3, name="features")
    norm = layers.BatchNormalization()
    created, traces = {}, []

    def creator(next_creator, **kwargs):
        traces[-1].append(kwargs["name"])
        if kwargs["name"] not in created:  # made by the first trace only
            created[kwargs["name"]] = next_creator(**kwargs)
        return created[kwargs["name"]]

    @tf.function
    def step(images):
        traces.append([])
        with _fresh_variable_store(), tf.variable_creator_scope(creator):
            out = norm(layer(images), training=True)
        assert norm.moving_mean is created["batch_normalization/moving_mean"]
        with tf.control_dependencies(norm.updates):
            return tf.identity(out)

    step(tf.ones([1, 5, 5, 3]))
    step(tf.ones([2, 5, 5, 3]))  # a retrace
    names = [
        "features/kernel",
        "features/bias",
        "batch_normalization/gamma",
        "batch_normalization/beta",
        "batch_normalization/moving_mean",
        "batch_normalization/moving_variance",
    ]
    assert len(traces) >= 2
    assert all(trace == names for trace in traces)
    assert list(created) == names
    assert np.any(created["batch_normalization/moving_mean"].numpy() != 0)


# ---- errors ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "error", "pattern"),
    [
        (lambda: layers.Dense(0), ValueError, r"`units` must be a positive.*units=0"),
        (lambda: layers.Dense("4"), TypeError, r"`units`.*'4' of type str"),
        (lambda: layers.Dense(4, bias=True), TypeError, r"unexpected keyword.*'bias'"),
        (lambda: layers.Dense(4, name=3), TypeError, r"`name` must be a string.*3"),
        (lambda: layers.Conv2D(4, (3, 3, 3)), ValueError,
         r"`kernel_size` must be a positive int or a tuple of 2.*\(3, 3, 3\)"),
        (lambda: layers.Conv3D(4, 3, strides=0), ValueError, r"`strides`.*strides=0"),
        (lambda: layers.Conv2D(4, 3, padding="causal"), ValueError,
         r"'valid' or 'same'.*'causal'"),
        (lambda: layers.SeparableConv2D(4, 3, padding="causal"), ValueError,
         r"'valid' or 'same'.*'causal'"),
        (lambda: layers.Conv2DTranspose(4, 3, padding="full"), ValueError,
         r"padding='full'"),
        (lambda: layers.Conv2D(4, 3, strides=2, dilation_rate=2), ValueError,
         r"strides=\(2, 2\) and dilation_rate=\(2, 2\)"),
        (lambda: layers.SeparableConv1D(4, 3, depth_multiplier=0), ValueError,
         r"`depth_multiplier`.*=0"),
        (lambda: layers.MaxPooling3D(2, 2, data_format="NDHWC"), ValueError,
         r"`data_format` must be .*'NDHWC'"),
        (lambda: layers.Dropout(1.0), ValueError, r"`rate` must be in \[0, 1\).*1.0"),
        (lambda: layers.BatchNormalization(axis="channels"), TypeError,
         r"`axis` must be an int or a list of ints.*'channels'"),
        (lambda: layers.Layer().scope_name, ValueError, r"Call it on a tensor first"),
    ],
)  # fmt: skip
def test_bad_arguments_name_the_value(make, error, pattern):
    with pytest.raises(error, match=pattern):
        make()


def test_bad_inputs_name_the_shape(graph):
    with pytest.raises(
        ValueError, match=r"conv3d expects inputs of rank 5.*\(1, 4, 4, 1\)"
    ):
        layers.Conv3D(2, 2)(tf.zeros([1, 4, 4, 1]))
    with pytest.raises(ValueError, match=r"rank 4"):
        layers.conv2d_transpose(tf.zeros([4, 4, 1]), 1, 2)
    with pytest.raises(ValueError, match=r"channel dimension .* should be defined"):
        layers.SeparableConv2D(2, 2)(
            tf.compat.v1.placeholder(tf.float32, [1, 4, 4, None])
        )
    with pytest.raises(ValueError, match=r"rank 2 or more.*\(3,\)"):
        layers.Dense(2)(tf.zeros([3]))


def test_add_weight_refuses_trainable_on_read_variables(graph):
    class _Bad(layers.Layer):
        def build(self, input_shape):
            self.add_weight(
                "stat",
                [1],
                trainable=True,
                synchronization=tf.VariableSynchronization.ON_READ,
            )

    with pytest.raises(
        ValueError, match=r"stat is synchronized on read.*trainable=False"
    ):
        _Bad()(tf.ones([1, 1]))


def test_eager_call_raises_clear_error():
    with pytest.raises(RuntimeError, match=r"layers\.Dense was called eagerly"):
        layers.Dense(2)(tf.ones([1, 2]))


# ---- keras style and install -------------------------------------------------
def test_keras_style_scope_refuses_sharing_arguments(graph):
    with layers.experimental.keras_style_scope():
        first, second = layers.Dense(2, name="model"), layers.Dense(2, name="model")
        with pytest.raises(ValueError, match=r"never share variables.*_scope='x'"):
            layers.Dense(2, _scope="x")
        with pytest.raises(ValueError, match=r"_reuse=True"):
            layers.dense(tf.ones([1, 2]), 2, reuse=True)
    layers.Dense(2, _scope="x")  # allowed again outside the block
    first(tf.ones([1, 2]))
    second(tf.ones([1, 2]))
    assert first.weights != second.weights
    assert [first.scope_name, second.scope_name] == ["model", "model_1"]


def test_install_exposes_classes_under_tf_compat_v1_layers():
    with ke.install():
        assert tf.compat.v1.layers.Dense is layers.Dense
        assert tf.compat.v1.layers.conv3d_transpose is layers.conv3d_transpose
        assert tf.compat.v1.layers.experimental.keras_style_scope is (
            layers.experimental.keras_style_scope
        )


# ---- shapes: a property against tf.nn ------------------------------------------
@given(
    rank=st.sampled_from([1, 2, 3]),
    kernel=st.integers(1, 4),
    stride=st.integers(1, 3),
    size=st.integers(4, 9),
    padding=st.sampled_from(["valid", "same"]),
    transposed=st.booleans(),
)
def test_conv_output_shapes_equal_tf_nn(
    rank, kernel, stride, size, padding, transposed
):
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(0)
        x = tf.ones([2, *[size] * rank, 3])
        if transposed and rank > 1:
            cls = layers.Conv2DTranspose if rank == 2 else layers.Conv3DTranspose
            out = cls(4, kernel, strides=stride, padding=padding)(x)
            # The transposed layer's output is what tf.nn's convolution maps
            # back to the input shape (in "valid", the smallest such size).
            back = tf.nn.convolution(
                tf.zeros(out.shape), tf.zeros([kernel] * rank + [4, 3]), stride,
                padding.upper(),
            )  # fmt: skip
            assert back.shape.as_list() == x.shape.as_list()
        else:
            cls = {1: layers.Conv1D, 2: layers.Conv2D, 3: layers.Conv3D}[rank]
            out = cls(4, kernel, strides=stride, padding=padding)(x)
            expected = tf.nn.convolution(
                x, tf.zeros([kernel] * rank + [3, 4]), stride, padding.upper()
            )
            assert out.shape.as_list() == expected.shape.as_list()


# ---- inside an Estimator -----------------------------------------------------------
_SHARED_HEAD = layers.Dense(3, name="logits")  # made once, called in every trace


def _class_model_fn(features, labels, mode):
    net = layers.Dense(8, activation=tf.nn.relu)(features["x"])
    net = layers.BatchNormalization()(net, training=mode == ke.ModeKeys.TRAIN)
    net = layers.Dropout(0.1, seed=1).apply(net, training=mode == ke.ModeKeys.TRAIN)
    logits = _SHARED_HEAD(net)
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == ke.ModeKeys.EVAL:
        return ke.EstimatorSpec(mode, loss=loss)
    update_ops = tf.compat.v1.get_collection(GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = tf.compat.v1.train.AdamOptimizer(0.05).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_class_model_fn_trains_and_checkpoints_tf1_names(tmp_path):
    x, y = make_data()
    estimator = ke.Estimator(_class_model_fn, model_dir=str(tmp_path))
    before = estimator.train(input_fn(x, y), steps=1).evaluate(
        input_fn(x, y, repeat=False)
    )["loss"]
    after = estimator.train(input_fn(x, y), steps=60).evaluate(
        input_fn(x, y, repeat=False)
    )["loss"]
    assert after < before
    names = {name for name, _ in tf.train.list_variables(str(tmp_path))}
    assert {
        "dense/kernel",
        "dense/bias",
        "batch_normalization/gamma",
        "batch_normalization/beta",
        "batch_normalization/moving_mean",
        "batch_normalization/moving_variance",
        "logits/kernel",
        "logits/bias",
        "global_step",
    } <= names
    assert "logits_1/kernel" not in names and "dense_1/kernel" not in names
    assert np.any(estimator.get_variable_value("batch_normalization/moving_mean") != 0)
    predictions = list(estimator.predict(input_fn(x[:4], y[:4], repeat=False)))
    assert predictions[0]["logits"].shape == (3,)
