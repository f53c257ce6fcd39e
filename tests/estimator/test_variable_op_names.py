"""`variable.op.name`, as TF1 model_fns and hooks read it, is tf.estimator 2.15's.

`tf.compat.v1.summary.histogram(v.op.name, v)` over the trainable variables
in a model_fn, and `{v.op.name: v for v in tf.compat.v1.global_variables()}`
in a hook's `begin()`, are TF1 idioms. 2.15's names below were read from
tf.estimator 2.15 running the same program (two `tf.compat.v1.layers.dense`
layers, v1 Adam).
"""

from __future__ import annotations

import tensorflow as tf

import keras_estimator
from keras_estimator.compat.layers import dense

# tf.estimator 2.15: the model_fn's trainable variables, in order.
TF215_TRAINABLE = ["dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"]
# tf.estimator 2.15: a hook's global variables in begin(), sorted (train and eval).
TF215_GLOBAL = sorted(
    ["beta1_power", "beta2_power", "global_step"]
    + [
        f"{layer}/{kind}{slot}"
        for layer in ("dense", "dense_1")
        for kind in ("kernel", "bias")
        for slot in ("", "/Adam", "/Adam_1")
    ]
)


def _run(tmp_path, config=None):
    seen: dict = {"model_fn": {}, "hook": {}, "histograms": set()}

    def model_fn(features, labels, mode):
        net = dense(features["x"], 3, activation=tf.nn.relu)
        logits = dense(net, 2)
        names = [v.op.name for v in tf.compat.v1.trainable_variables()]
        seen["model_fn"].setdefault(mode, []).append(names)
        for variable in tf.compat.v1.trainable_variables():
            tf.compat.v1.summary.histogram(variable.op.name, variable)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        optimizer = tf.compat.v1.train.AdamOptimizer(0.1)
        train_op = optimizer.minimize(loss, tf.compat.v1.train.get_global_step())
        return keras_estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, predictions={"logits": logits}
        )

    class NamesHook(tf.compat.v1.train.SessionRunHook):
        def __init__(self, mode):
            self.mode = mode

        def begin(self):
            variables = tf.compat.v1.global_variables()
            seen["hook"][self.mode] = sorted(v.op.name for v in variables)
            self.by_name = {v.op.name: v for v in variables}

    def input_fn():
        features = {"x": tf.ones([2, 4])}
        return tf.data.Dataset.from_tensors((features, tf.constant([0, 1]))).repeat(3)

    estimator = keras_estimator.Estimator(
        model_fn,
        model_dir=str(tmp_path),
        config=config or keras_estimator.RunConfig(tf_random_seed=1),
    )
    train_hook = NamesHook("train")
    estimator.train(input_fn, steps=2, hooks=[train_hook])
    estimator.evaluate(input_fn, steps=1, hooks=[NamesHook("eval")])
    return seen, estimator, train_hook


def test_model_fn_and_hooks_read_2_15s_variable_op_names(tmp_path):
    seen, estimator, train_hook = _run(tmp_path)
    assert seen["model_fn"] == {"train": [TF215_TRAINABLE], "eval": [TF215_TRAINABLE]}
    assert seen["hook"] == {"train": TF215_GLOBAL, "eval": TF215_GLOBAL}
    # The names key the variables themselves, whose values are the checkpoint's.
    kernel = train_hook.by_name["dense/kernel"]
    assert kernel.op.type == "VarHandleOp"
    assert (kernel.numpy() == estimator.get_variable_value("dense/kernel")).all()


def test_histograms_named_after_variable_ops_are_written(tmp_path):
    _run(tmp_path)
    tags = set()
    for path in tmp_path.glob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            tags.update(value.tag for value in event.summary.value)
    assert set(TF215_TRAINABLE) <= tags


def test_variable_op_names_under_a_mirrored_strategy(tmp_path):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    config = keras_estimator.RunConfig(tf_random_seed=1, train_distribute=strategy)
    seen, _, _ = _run(tmp_path, config)
    # tf.estimator 2.15 under the same strategy (cross_device_ops
    # ReductionToOneDevice): the second replica's call sees its own copies.
    second = [f"{name}/replica_1" for name in TF215_TRAINABLE]
    assert seen["model_fn"]["train"] == [TF215_TRAINABLE, second]
    assert seen["hook"]["train"] == TF215_GLOBAL


def test_variables_are_in_the_graph_of_the_model_fn_and_of_hooks(tmp_path):
    """In tf.estimator 2.15 (reference venv) `v.graph is
    tf.compat.v1.get_default_graph()` held for every global variable in a
    model_fn and in a hook's begin(), and `with w.graph.as_default():` built
    in the model_fn's graph; here `v.graph` raised 'Tensor.graph is undefined
    when eager execution is enabled'."""
    seen: dict = {}

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [4, 2])
        graph = tf.compat.v1.get_default_graph()
        seen[f"model_fn {mode}"] = [v.graph is graph for v in tf.compat.v1.global_variables()]
        with w.graph.as_default():
            made = tf.constant(1.0, name="made_in_w_graph")
        seen[f"constant {mode}"] = made.graph is graph
        logits = tf.matmul(features["x"], w)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, tf.compat.v1.train.get_global_step()
        )
        return keras_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    class GraphHook(tf.compat.v1.train.SessionRunHook):
        def __init__(self, mode):
            self.mode = mode

        def begin(self):
            graph = tf.compat.v1.get_default_graph()
            variables = tf.compat.v1.global_variables()
            seen[f"hook {self.mode}"] = [v.graph is graph for v in variables]

    def input_fn():
        features = {"x": tf.ones([2, 4])}
        return tf.data.Dataset.from_tensors((features, tf.constant([0, 1]))).repeat(3)

    estimator = keras_estimator.Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(input_fn, steps=2, hooks=[GraphHook("train")])
    estimator.evaluate(input_fn, steps=1, hooks=[GraphHook("eval")])
    assert seen == {
        "model_fn train": [True, True],
        "constant train": True,
        "hook train": [True, True],
        "model_fn eval": [True, True],
        "constant eval": True,
        "hook eval": [True, True],
    }
