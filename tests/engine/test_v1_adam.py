"""v1 AdamOptimizer's small dense updates, run inline, equal TensorFlow's kernel."""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.engine import v1_adam as _v1_adam
from keras_estimator.compat import layers
from tests._models import input_fn, make_data, mlp_model_fn


def _run_updates(kind, initial, gradients, hyper):
    """`initial` updated by each gradient in turn, through `kind`; (var, m, v)."""
    dtype = initial.dtype
    var = tf.Variable(initial)
    m = tf.Variable(tf.zeros_like(initial))
    v = tf.Variable(tf.zeros_like(initial))
    beta1_power = tf.Variable(np.array(hyper["beta1"], dtype))
    beta2_power = tf.Variable(np.array(hyper["beta2"], dtype))

    def constant(name):
        return tf.constant(hyper[name], dtype)

    @tf.function(autograph=False)
    def step(grad):
        if kind == "kernel":
            update = tf.raw_ops.ResourceApplyAdam(
                var=var.handle,
                m=m.handle,
                v=v.handle,
                beta1_power=beta1_power.read_value(),
                beta2_power=beta2_power.read_value(),
                lr=constant("learning_rate"),
                beta1=constant("beta1"),
                beta2=constant("beta2"),
                epsilon=constant("epsilon"),
                grad=grad,
            )
        else:
            update = _v1_adam.apply_adam(
                var.handle,
                m=m.handle,
                v=v.handle,
                grad=grad,
                alpha=_v1_adam.step_size(
                    constant("learning_rate"),
                    beta1_power.read_value(),
                    beta2_power.read_value(),
                ),
                beta1=constant("beta1"),
                beta2=constant("beta2"),
                epsilon=constant("epsilon"),
            )
        with tf.control_dependencies([update]):
            beta1_power.assign(beta1_power * constant("beta1"))
            beta2_power.assign(beta2_power * constant("beta2"))

    for gradient in gradients:
        step(tf.constant(gradient))
    return var.numpy(), m.numpy(), v.numpy()


@given(
    size=st.integers(1, 3000),
    dtype=st.sampled_from([np.float32, np.float64]),
    steps=st.integers(1, 6),
    learning_rate=st.floats(1e-5, 1.0),
    beta1=st.floats(0.0, 0.999),
    beta2=st.floats(0.5, 0.99999),
    epsilon=st.floats(1e-10, 1e-1),
    seed=st.integers(0, 2**16),
)
def test_inline_update_equals_the_kernel_bit_for_bit(
    size, dtype, steps, learning_rate, beta1, beta2, epsilon, seed
):
    rng = np.random.default_rng(seed)
    initial = rng.standard_normal(size).astype(dtype)
    gradients = [
        (rng.standard_normal(size) * 10 ** rng.uniform(-6, 2)).astype(dtype)
        for _ in range(steps)
    ]
    hyper = {
        "learning_rate": learning_rate,
        "beta1": beta1,
        "beta2": beta2,
        "epsilon": epsilon,
    }
    kernel = _run_updates("kernel", initial, gradients, hyper)
    inline = _run_updates("inline", initial, gradients, hyper)
    for expected, got in zip(kernel, inline, strict=True):
        np.testing.assert_array_equal(got, expected)


def _adam_ops(estimator):
    """Counts of each op type in the Estimator's compiled training step."""
    graph = estimator._model.build_graphs[ke.ModeKeys.TRAIN]
    counts = {}
    for op in graph.get_operations():
        counts[op.type] = counts.get(op.type, 0) + 1
    return counts


def _train(tmp_path, name, params, steps=12):
    x, y = make_data(48)
    estimator = ke.Estimator(
        mlp_model_fn,
        str(tmp_path / name),
        params=params,
        config=ke.RunConfig(tf_random_seed=3),
    )
    estimator.train(input_fn(x, y, batch_size=8), steps=steps)
    return estimator


def test_estimator_training_equals_the_kernel_and_skips_it(tmp_path, monkeypatch):
    params = {"hidden": [16, 8], "optimizer": "adam", "learning_rate": 0.01}
    inline = _train(tmp_path, "inline", params)
    monkeypatch.setattr(_v1_adam, "MAX_UPDATED_ELEMENTS", 0)
    kernel = _train(tmp_path, "kernel", params)
    assert _adam_ops(inline).get("ResourceApplyAdam", 0) == 0
    assert _adam_ops(kernel)["ResourceApplyAdam"] == 6
    names = inline.get_variable_names()
    assert "dense/kernel/Adam" in names and "beta1_power" in names
    for name in names:
        np.testing.assert_array_equal(
            inline.get_variable_value(name), kernel.get_variable_value(name), err_msg=name
        )


def _big_model_fn(features, labels, mode):
    """A model of MAX_UPDATED_ELEMENTS elements and more (a 512 x 256 kernel)."""
    hidden = layers.dense(tf.tile(features["x"], [1, 128]), 256)
    logits = layers.dense(hidden, 3)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_inline_updates_add_at_most_fifteen_ops_per_variable(tmp_path, monkeypatch):
    # Each variable's update is its arithmetic alone (16 ops for the kernel's
    # one); the step size, 1 - beta1 and 1 - beta2 are made once per
    # apply_gradients call, not once per variable, and no op groups each
    # update. The traced step stays that much smaller, and so does what its
    # first call compiles (on every cold start).
    params = {"hidden": [16, 8], "optimizer": "adam", "learning_rate": 0.01}
    inline = _train(tmp_path, "inline", params, steps=1)
    monkeypatch.setattr(_v1_adam, "MAX_UPDATED_ELEMENTS", 0)
    kernel = _train(tmp_path, "kernel", params, steps=1)
    extra = sum(_adam_ops(inline).values()) - sum(_adam_ops(kernel).values())
    assert extra <= 15 * 6


def test_large_models_keep_the_kernel(tmp_path):
    x, y = make_data(16)
    estimator = ke.Estimator(_big_model_fn, str(tmp_path))
    estimator.train(input_fn(x, y, batch_size=8), steps=1)
    names = ("dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias")
    total = sum(estimator.get_variable_value(name).size for name in names)
    assert total >= _v1_adam.MAX_UPDATED_ELEMENTS
    # Every variable, the small ones too, is updated by TensorFlow's kernel.
    assert _adam_ops(estimator)["ResourceApplyAdam"] == 4


def test_use_locking_keeps_the_kernel(tmp_path):
    def model_fn(features, labels, mode):
        logits = layers.dense(features["x"], 3)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        optimizer = tf.compat.v1.train.AdamOptimizer(1e-3, use_locking=True)
        train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x, y = make_data(16)
    estimator = ke.Estimator(model_fn, str(tmp_path))
    estimator.train(input_fn(x, y, batch_size=8), steps=1)
    assert _adam_ops(estimator)["ResourceApplyAdam"] == 2


def test_adam_outside_the_estimator_is_untouched(tmp_path):
    _train(tmp_path, "first", {"optimizer": "adam"}, steps=1)
    var = tf.Variable([1.0, 2.0])
    optimizer = tf.compat.v1.train.AdamOptimizer(0.1)

    @tf.function(autograph=False)
    def step():
        optimizer.minimize(lambda: tf.reduce_sum(var * var), var_list=[var])

    graph = step.get_concrete_function().graph
    assert "ResourceApplyAdam" in {op.type for op in graph.get_operations()}


def test_tensorflows_method_is_back_after_each_trace(tmp_path):
    from tensorflow.python.training import adam

    original = adam.AdamOptimizer.__dict__["_resource_apply_dense"]
    _train(tmp_path, "traced", {"optimizer": "adam"}, steps=2)
    assert adam.AdamOptimizer.__dict__["_resource_apply_dense"] is original
    with _v1_adam.inline_small_updates():
        assert adam.AdamOptimizer.__dict__["_resource_apply_dense"] is not original
        with _v1_adam.inline_small_updates():  # nested scopes keep it replaced
            pass
        assert adam.AdamOptimizer.__dict__["_resource_apply_dense"] is not original
    assert adam.AdamOptimizer.__dict__["_resource_apply_dense"] is original


def test_environment_opts_out(tmp_path, monkeypatch):
    from tensorflow.python.training import adam

    original = adam.AdamOptimizer.__dict__["_resource_apply_dense"]
    monkeypatch.setenv(_v1_adam.OPT_OUT_VARIABLE, "0")
    with _v1_adam.inline_small_updates():
        assert adam.AdamOptimizer.__dict__["_resource_apply_dense"] is original
    estimator = _train(tmp_path, "opted_out", {"hidden": [16, 8], "optimizer": "adam"})
    assert _adam_ops(estimator)["ResourceApplyAdam"] == 6


class _Update:
    """Stands in for one dense update of an AdamOptimizer."""

    def __init__(self, shape, dtype, use_locking=False, model_elements=100, key=0):
        self.var = tf.Variable(tf.zeros(shape, dtype))
        self.grad = tf.zeros(shape, dtype)
        self.use_locking = use_locking
        self._model_elements = model_elements
        self._key = key
        self.size_queries = 0

    def call_key(self):
        return self._key

    def updated_elements(self):
        self.size_queries += 1
        return self._model_elements


@pytest.mark.parametrize(
    ("update", "expected"),
    [
        (_Update([64, 64], tf.float32), True),
        (_Update([3], tf.float64), True),
        (_Update([64, 64], tf.float32, use_locking=True), False),
        (_Update([4], tf.float16), False),
        (_Update([4], tf.float32, model_elements=_v1_adam.MAX_UPDATED_ELEMENTS), False),
        (_Update([4], tf.float32, model_elements=None), False),
    ],
)
def test_runs_inline_rules(update, expected):
    with _v1_adam.inline_small_updates():
        assert _v1_adam.runs_inline(update) is expected


def test_model_size_is_read_once_per_apply_gradients_call():
    first, second = _Update([4], tf.float32), _Update([4], tf.float32)
    other_call = _Update([4], tf.float32, key=1)
    with _v1_adam.inline_small_updates():
        for update in (first, second, other_call):
            assert _v1_adam.runs_inline(update)
    assert (first.size_queries, second.size_queries, other_call.size_queries) == (1, 0, 1)
