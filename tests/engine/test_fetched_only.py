"""evaluate(), predict() and export run only what they fetch, as a TF1 session did.

Guide-style model_fns build `optimizer.minimize(...)`, `assign`s and
`UPDATE_OPS` in every mode and return one EstimatorSpec; tf.estimator ignored
the train_op outside TRAIN. Here every such model_fn must leave the variables
and the global step bitwise as they were after evaluate, predict and export.
"""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator.compat import layers
from tests._models import input_fn, make_data

X, Y = make_data()

_OPTIMIZERS = {
    "sgd": lambda: tf.compat.v1.train.GradientDescentOptimizer(0.1),
    "adam": lambda: tf.compat.v1.train.AdamOptimizer(0.05),
    "adagrad": lambda: tf.compat.v1.train.AdagradOptimizer(0.1),
    "momentum": lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9),
}


def guide_model_fn(features, labels, mode, params):
    """One spec for every mode, with a train op and side updates built always."""
    logits = layers.dense(layers.dense(features["x"], 8, activation=tf.nn.relu), 3)
    classes = tf.argmax(logits, 1)
    predictions = {"classes": classes, "logits": logits}
    counter = tf.compat.v1.get_variable(
        "updates_seen", [], tf.float32, tf.zeros_initializer(), trainable=False
    )
    if params["update_ops"]:
        tf.compat.v1.add_to_collection(
            tf.compat.v1.GraphKeys.UPDATE_OPS, counter.assign_add(1.0)
        )
    if params["stray_assign"] and mode != ke.ModeKeys.TRAIN:
        # Built but neither fetched nor a dependency of anything fetched. (In
        # TRAIN such an op runs here, as in any TF2 function: see README.)
        counter.assign(-100.0)
    if labels is None:  # PREDICT, and serving
        loss = tf.reduce_mean(tf.square(logits))
    else:
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = _OPTIMIZERS[params["optimizer"]]()
    with tf.control_dependencies(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)):
        train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    metrics = {}
    if labels is not None:
        metrics["accuracy"] = tf.compat.v1.metrics.accuracy(labels, classes)
        if params["keras_metric"]:
            mean_label = tf.keras.metrics.Mean(name="mean_label")
            mean_label.update_state(tf.cast(labels, tf.float32))
            metrics["mean_label"] = mean_label
    return ke.EstimatorSpec(
        mode,
        predictions=predictions,
        loss=loss,
        train_op=train_op,
        eval_metric_ops=metrics,
    )


def _live_values(estimator):
    # The variables the Estimator computes with (not the checkpoint's copy).
    store = estimator._get_model()._store
    return {name: v.numpy().copy() for name, v in store.saveable().items()}


def _assert_same(before, after):
    assert sorted(before) == sorted(after)
    for name in before:
        np.testing.assert_array_equal(before[name], after[name], err_msg=name)


def _features_only(batch_size=16):
    return lambda: tf.data.Dataset.from_tensor_slices({"x": X}).batch(batch_size)


def _serving_receiver_fn():
    return ke.export.build_raw_serving_input_receiver_fn(
        {"x": tf.constant(X[:1])}, default_batch_size=None
    )


@given(
    optimizer=st.sampled_from(sorted(_OPTIMIZERS)),
    update_ops=st.booleans(),
    stray_assign=st.booleans(),
    keras_metric=st.booleans(),
)
def test_evaluate_predict_export_change_no_variable(
    tmp_path_factory, optimizer, update_ops, stray_assign, keras_metric
):
    params = dict(
        optimizer=optimizer,
        update_ops=update_ops,
        stray_assign=stray_assign,
        keras_metric=keras_metric,
    )
    model_dir = tmp_path_factory.mktemp("model")
    est = ke.Estimator(guide_model_fn, model_dir=str(model_dir), params=params)
    est.train(input_fn(X, Y), steps=5)
    before = _live_values(est)
    assert before["global_step"] == 5

    eval_input = input_fn(X, Y, repeat=False)
    first = est.evaluate(eval_input)
    predictions = list(est.predict(_features_only()))
    export_dir = est.export_saved_model(str(model_dir / "export"), _serving_receiver_fn())
    second = est.evaluate(eval_input)

    _assert_same(before, _live_values(est))
    assert first["global_step"] == second["global_step"] == 5
    assert first == second
    assert len(predictions) == len(X)
    # The SavedModel serves without changing its own variables either.
    loaded = tf.saved_model.load(export_dir)
    serve = loaded.signatures["serving_default"]
    served = [serve(x=tf.constant(X[:4]))["logits"].numpy() for _ in range(2)]
    np.testing.assert_array_equal(served[0], served[1])
    if keras_metric:
        # Metric updates are the one kind of update evaluation makes.
        assert first["mean_label"] == pytest.approx(float(np.mean(Y)), rel=1e-6)
    if update_ops:
        # UPDATE_OPS ran in each training step only.
        assert before["updates_seen"] == 5.0


def test_interleaved_evaluation_leaves_training_as_without_it(tmp_path):
    params = dict(optimizer="adam", update_ops=True, stray_assign=True, keras_metric=True)
    config = ke.RunConfig(tf_random_seed=7)
    mixed = ke.Estimator(
        guide_model_fn, model_dir=str(tmp_path / "mixed"), params=params, config=config
    )
    for _ in range(3):
        mixed.train(input_fn(X, Y), steps=4)
        mixed.evaluate(input_fn(X, Y, repeat=False))
        list(mixed.predict(_features_only()))
    # Each train() call restarts the input, so compare with the same calls.
    plain_calls = ke.Estimator(
        guide_model_fn, model_dir=str(tmp_path / "plain_calls"), params=params, config=config
    )
    for _ in range(3):
        plain_calls.train(input_fn(X, Y), steps=4)

    assert mixed.get_variable_value("global_step") == 12
    for name in plain_calls.get_variable_names():
        np.testing.assert_array_equal(
            mixed.get_variable_value(name), plain_calls.get_variable_value(name), err_msg=name
        )


def test_evaluation_hooks_still_fetch_from_the_pruned_step(tmp_path):
    seen = []

    class FetchLoss(ke.SessionRunHook):
        def before_run(self, run_context):
            return ke.SessionRunArgs({"loss": "eval_loss:0"})

        def after_run(self, run_context, run_values):
            seen.append(run_values.results["loss"])

    def model_fn(features, labels, mode, params):
        spec = guide_model_fn(features, labels, mode, params)
        if mode != ke.ModeKeys.EVAL:
            return spec
        loss = tf.identity(spec.loss, name="eval_loss")
        return spec._replace(loss=loss, evaluation_hooks=[FetchLoss()])

    params = dict(optimizer="sgd", update_ops=True, stray_assign=False, keras_metric=False)
    est = ke.Estimator(model_fn, model_dir=str(tmp_path), params=params)
    est.train(input_fn(X, Y), steps=3)
    before = _live_values(est)
    results = est.evaluate(input_fn(X, Y, batch_size=16, repeat=False))
    _assert_same(before, _live_values(est))
    assert len(seen) == len(X) // 16
    assert results["loss"] == pytest.approx(float(np.mean(seen)), rel=1e-5)


def test_metric_updated_twice_in_a_step_counts_both_updates(tmp_path):
    # Each update reads the metric's state and writes it back; evaluation
    # keeps them in the order model_fn made them, so none is lost.
    def model_fn(features, labels, mode):
        logits = layers.dense(features["x"], 3)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        both = tf.keras.metrics.Mean(name="both")
        both.update_state(tf.cast(labels, tf.float32))
        both.update_state(features["x"][:, 0])
        return ke.EstimatorSpec(
            mode, loss=loss, train_op=train_op, eval_metric_ops={"both": both}
        )

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(input_fn(X, Y), steps=2)
    results = est.evaluate(input_fn(X, Y, repeat=False))
    expected = np.mean(np.concatenate([Y.astype("float32"), X[:, 0]]))
    assert results["both"] == pytest.approx(float(expected), rel=1e-5)
    assert results["global_step"] == 2
