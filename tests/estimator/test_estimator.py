"""Estimator train/evaluate/predict, model_dir checkpoints and bad input."""

import logging
import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.compat import layers
from tests._models import forward, input_fn, make_data, mlp_model_fn

X, Y = make_data()
PARAMS = {"hidden": [8]}


def make_estimator(model_dir, **config):
    config.setdefault("tf_random_seed", 1)
    return ke.Estimator(
        mlp_model_fn, model_dir=str(model_dir), config=ke.RunConfig(**config),
        params=PARAMS,
    )


def checkpoint_steps(model_dir):
    state = tf.train.get_checkpoint_state(str(model_dir))
    return [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]


def test_train_evaluate_predict_and_files(tmp_path):
    est = make_estimator(tmp_path, save_checkpoints_steps=10)
    est.train(input_fn(X, Y), steps=30)
    assert est.latest_checkpoint().endswith("model.ckpt-30")
    assert checkpoint_steps(tmp_path) == [0, 10, 20, 30]
    assert os.path.exists(tmp_path / "model.ckpt-30.index")
    assert "dense/kernel" in est.get_variable_names()
    assert "dense/kernel/Adam" in est.get_variable_names()
    assert est.get_variable_value("global_step") == 30

    metrics = est.evaluate(input_fn(X, Y, repeat=False))
    assert metrics["global_step"] == 30
    assert set(metrics) == {"accuracy", "loss", "global_step"}
    logits = forward(est, X, PARAMS["hidden"])
    assert metrics["accuracy"] == pytest.approx(np.mean(logits.argmax(1) == Y), abs=1e-6)

    predictions = list(est.predict(input_fn(X, Y, repeat=False)))
    assert len(predictions) == len(X)
    np.testing.assert_allclose(
        np.stack([p["logits"] for p in predictions]), logits, rtol=1e-5, atol=1e-5
    )
    assert os.path.isdir(est.eval_dir())


def test_training_reduces_loss(tmp_path):
    est = make_estimator(tmp_path)
    before = est.evaluate(input_fn(X, Y, repeat=False))["loss"] if False else None
    est.train(input_fn(X, Y), steps=1)
    first = est.evaluate(input_fn(X, Y, repeat=False))["loss"]
    est.train(input_fn(X, Y), steps=200)
    last = est.evaluate(input_fn(X, Y, repeat=False))["loss"]
    assert before is None and last < first * 0.7


def test_steps_add_and_max_steps_is_absolute(tmp_path):
    est = make_estimator(tmp_path)
    est.train(input_fn(X, Y), steps=5)
    est.train(input_fn(X, Y), steps=7)
    assert est.get_variable_value("global_step") == 12
    est.train(input_fn(X, Y), max_steps=20)
    assert est.get_variable_value("global_step") == 20
    est.train(input_fn(X, Y), max_steps=15)  # already past: a no-op
    assert est.get_variable_value("global_step") == 20


def test_new_estimator_resumes_from_model_dir(tmp_path):
    make_estimator(tmp_path).train(input_fn(X, Y), steps=9)
    est = make_estimator(tmp_path)
    est.train(input_fn(X, Y), steps=3)
    assert est.get_variable_value("global_step") == 12


def test_input_exhaustion_ends_training(tmp_path):
    est = make_estimator(tmp_path)
    est.train(input_fn(X, Y, batch_size=16, repeat=False))  # 64 rows: 4 batches
    assert est.get_variable_value("global_step") == 4


def test_keep_checkpoint_max(tmp_path):
    est = make_estimator(tmp_path, save_checkpoints_steps=2, keep_checkpoint_max=2)
    est.train(input_fn(X, Y), steps=10)
    assert checkpoint_steps(tmp_path) == [8, 10]
    on_disk = sorted(p.name for p in tmp_path.glob("model.ckpt-*.index"))
    assert on_disk == ["model.ckpt-10.index", "model.ckpt-8.index"]


def test_checkpoint_path_selects_checkpoint(tmp_path):
    est = make_estimator(tmp_path, save_checkpoints_steps=5)
    est.train(input_fn(X, Y), steps=10)
    early = est.evaluate(
        input_fn(X, Y, repeat=False), checkpoint_path=str(tmp_path / "model.ckpt-5")
    )
    assert early["global_step"] == 5
    late = est.evaluate(input_fn(X, Y, repeat=False))
    assert late["global_step"] == 10


def test_evaluate_steps_limits_batches(tmp_path):
    est = make_estimator(tmp_path)
    est.train(input_fn(X, Y), steps=2)
    one_batch = est.evaluate(input_fn(X[:16], Y[:16], repeat=False), steps=1)
    first_rows = est.evaluate(input_fn(X, Y, batch_size=16), steps=1)
    assert one_batch["loss"] == pytest.approx(first_rows["loss"])


def test_model_dir_none_uses_temp_dir(caplog):
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        est = ke.Estimator(mlp_model_fn, params=PARAMS)
    assert os.path.isdir(est.model_dir)
    assert "temporary folder" in caplog.text
    assert est.config.model_dir == est.model_dir


def test_logging_like_tf_estimator(tmp_path, caplog):
    est = make_estimator(tmp_path, log_step_count_steps=10)
    with caplog.at_level(logging.INFO, logger="keras_estimator"):
        est.train(input_fn(X, Y), steps=25)
    # As tf.estimator logged: the step each logged loss was computed at.
    assert re.search(r"loss = [\d.]+, step = 0\b", caplog.text)
    assert re.search(r"loss = [\d.]+, step = 10\b", caplog.text)
    assert re.search(r"loss = [\d.]+, step = 20\b", caplog.text)
    assert "global_step/sec: " in caplog.text
    # 2.15's line names the save path without the step.
    saved = os.path.join(str(tmp_path), "model.ckpt")
    assert f"Saving checkpoints for 25 into {saved}." in caplog.text


def test_repeated_predict_does_not_retrace(tmp_path):
    traces = []

    def counting_model_fn(features, labels, mode, params):
        traces.append(mode)
        return mlp_model_fn(features, labels, mode, params)

    est = ke.Estimator(counting_model_fn, model_dir=str(tmp_path), params=PARAMS)
    est.train(input_fn(X, Y), steps=2)
    single = input_fn(X[:1], Y[:1], repeat=False)
    next(est.predict(single))
    count = len(traces)
    for _ in range(5):
        next(est.predict(single))
    assert len(traces) == count


def test_predict_sees_new_checkpoint(tmp_path):
    est = make_estimator(tmp_path)
    est.train(input_fn(X, Y), steps=2)
    single = input_fn(X[:1], Y[:1], repeat=False)
    before = next(est.predict(single))["logits"]
    make_estimator(tmp_path).train(input_fn(X, Y), steps=50)
    after = next(est.predict(single))["logits"]
    assert not np.allclose(before, after)
    np.testing.assert_allclose(after, forward(est, X[:1], [8])[0], rtol=1e-5, atol=1e-5)


def test_predict_keys_and_batches(tmp_path):
    est = make_estimator(tmp_path)
    est.train(input_fn(X, Y), steps=1)
    rows = list(est.predict(input_fn(X, Y, repeat=False), predict_keys=["classes"]))
    assert set(rows[0]) == {"classes"}
    batches = list(
        est.predict(input_fn(X, Y, repeat=False), yield_single_examples=False)
    )
    assert [b["logits"].shape[0] for b in batches] == [16, 16, 16, 16]
    with pytest.raises(ValueError, match=r"predict_keys \['nope'\]"):
        list(est.predict(input_fn(X, Y, repeat=False), predict_keys=["nope"]))


def test_legacy_body_keras_layers_get_variable_batch_norm(tmp_path):
    def model_fn(features, labels, mode):
        training = mode == ke.ModeKeys.TRAIN
        with tf.compat.v1.variable_scope("tower"):
            scale = tf.compat.v1.get_variable("scale", shape=[4], initializer=tf.ones_initializer())
        net = keras.layers.Dense(8, activation="relu")(features * scale)
        net = keras.layers.BatchNormalization()(net, training=training)
        logits = keras.layers.Dense(3)(net)
        if mode == ke.ModeKeys.PREDICT:
            return ke.EstimatorSpec(mode, predictions=logits)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        metrics = keras.metrics.SparseCategoricalAccuracy()
        metrics.update_state(labels, logits)
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
        with tf.control_dependencies(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)):
            train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_or_create_global_step())
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={"acc": metrics})

    def features_only_input():
        return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(16)

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(features_only_input, steps=20)
    names = est.get_variable_names()
    assert "tower/scale" in names
    assert "batch_normalization/moving_mean" in names
    assert not np.allclose(est.get_variable_value("batch_normalization/moving_mean"), 0)
    metrics = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices((X, Y)).batch(16))
    assert 0 <= metrics["acc"] <= 1
    # Keras metric variables are evaluation state, not model state.
    assert not any("count" in n or "total" in n for n in est.get_variable_names())
    assert len(list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(X).batch(8)))) == 64


def test_keras_optimizer_without_global_step_still_advances(tmp_path):
    def model_fn(features, labels, mode):
        dense = keras.layers.Dense(3)
        logits = dense(features["x"])
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        optimizer = keras.optimizers.SGD(0.1)
        grads = tf.gradients(loss, dense.trainable_variables)
        train_op = optimizer.apply_gradients(zip(grads, dense.trainable_variables, strict=True))
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(input_fn(X, Y), steps=7)
    assert est.get_variable_value("global_step") == 7


def test_conditional_step_increment_still_counts_every_step(tmp_path):
    """A train_op that advances the global step only on some steps: the loop
    makes up the others, so `steps` still counts the steps run."""

    def model_fn(features, labels, mode):
        logits = layers.dense(features["x"], 3)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        step = tf.compat.v1.train.get_global_step()
        update = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.control_dependencies([update]):
            train_op = tf.cond(
                step % 2 == 0,
                lambda: step.assign_add(1, read_value=True),
                lambda: tf.identity(step),
            )
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    class StopAfterRuns(ke.SessionRunHook):
        """Ends a loop whose step does not advance (instead of running on)."""

        def __init__(self):
            self.runs = 0

        def after_run(self, run_context, run_values):
            self.runs += 1
            if self.runs >= 30:
                run_context.request_stop()

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    guard = StopAfterRuns()
    est.train(input_fn(X, Y), steps=7, hooks=[guard])
    assert est.get_variable_value("global_step") == 7
    assert guard.runs == 7


# ---- bad input ----------------------------------------------------------------

def test_model_fn_returning_non_spec(tmp_path):
    est = ke.Estimator(lambda features, labels, mode: {"loss": 1.0}, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="model_fn should return an EstimatorSpec, got dict"):
        est.train(input_fn(X, Y), steps=1)


def test_model_fn_unknown_parameter():
    with pytest.raises(ValueError, match=r"unknown parameters \['extra'\]"):
        ke.Estimator(lambda features, labels, extra: None)


@pytest.mark.parametrize("steps", [0, -3])
def test_steps_must_be_positive(tmp_path, steps):
    est = make_estimator(tmp_path)
    with pytest.raises(ValueError, match=f"steps > 0, given: {steps}"):
        est.train(input_fn(X, Y), steps=steps)


def test_steps_and_max_steps_together(tmp_path):
    est = make_estimator(tmp_path)
    with pytest.raises(ValueError, match=r"Can not provide both steps and max_steps\. Got steps=1 and max_steps=2"):
        est.train(input_fn(X, Y), steps=1, max_steps=2)


def test_input_fn_wrong_structure(tmp_path):
    est = make_estimator(tmp_path)
    with pytest.raises(ValueError, match="len 2 tuple: input_fn returned list"):
        est.train(lambda: [1, 2, 3], steps=1)
    with pytest.raises(ValueError, match="len 2 tuple: input_fn.s dataset yields a tuple of 3 elements"):
        est.train(lambda: tf.data.Dataset.from_tensors((X, Y, Y)), steps=1)


def test_features_only_input_passes_labels_none_in_every_mode(tmp_path):
    # As in tf.estimator: a dataset of features alone reaches model_fn with
    # labels=None, and a loss of the features alone trains.
    seen = []

    def model_fn(features, labels, mode):
        seen.append((mode, labels))
        x = features["x"]
        reconstruction = tf.keras.layers.Dense(4, name="decoder")(x)
        if mode == ke.ModeKeys.PREDICT:
            return ke.EstimatorSpec(mode, predictions={"r": reconstruction})
        loss = tf.reduce_mean(tf.square(reconstruction - x))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def features_only(repeat=False):
        dataset = tf.data.Dataset.from_tensor_slices({"x": X}).batch(8)
        return dataset.repeat() if repeat else dataset

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    before = est.train(features_only, steps=1).evaluate(features_only)["loss"]
    est.train(lambda: features_only(repeat=True), steps=30)
    after = est.evaluate(features_only)
    assert after["global_step"] == 31
    assert after["loss"] < before
    assert len(list(est.predict(features_only))) == len(X)
    assert {mode for mode, _ in seen} == {ke.ModeKeys.TRAIN, ke.ModeKeys.EVAL, ke.ModeKeys.PREDICT}
    assert all(labels is None for _, labels in seen)


def test_empty_dataset_warns_made_no_steps(tmp_path):
    est = make_estimator(tmp_path)
    with pytest.warns(UserWarning, match="made no steps"):
        est.train(input_fn(X[:0], Y[:0], repeat=False), steps=3)


def test_model_dir_not_writable(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    est = ke.Estimator(mlp_model_fn, model_dir=str(blocker / "sub"), params=PARAMS)
    with pytest.raises(ValueError, match="is not writable"):
        est.train(input_fn(X, Y), steps=1)


def test_checkpoint_shape_mismatch_names_both_shapes(tmp_path):
    make_estimator(tmp_path).train(input_fn(X, Y), steps=1)
    wider = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path), params={"hidden": [5]})
    with pytest.raises(ValueError, match=r"'dense/kernel' has shape \(4, 5\).*shape \(4, 8\)"):
        wider.train(input_fn(X, Y), steps=1)


def test_train_spec_without_train_op(tmp_path):
    def model_fn(features, labels, mode):
        logits = keras.layers.Dense(3)(features["x"])
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        return ke.EstimatorSpec(mode, loss=loss)

    with pytest.raises(ValueError, match="train_op"):
        ke.Estimator(model_fn, model_dir=str(tmp_path)).train(input_fn(X, Y), steps=1)


def test_predictions_of_wrong_type(tmp_path):
    def model_fn(features, mode):
        return ke.EstimatorSpec(mode, predictions=[features["x"]])

    with pytest.raises(TypeError, match="predictions"):
        next(ke.Estimator(model_fn, model_dir=str(tmp_path)).predict(input_fn(X, Y, repeat=False)))


def test_get_variable_value_without_checkpoint(tmp_path):
    with pytest.raises(ValueError, match="has no checkpoint yet"):
        make_estimator(tmp_path).get_variable_names()


def test_summary_calls_in_model_fn_do_not_break_training(tmp_path):
    def model_fn(features, labels, mode, params):
        spec = mlp_model_fn(features, labels, mode, params)
        if spec.loss is not None:
            tf.compat.v1.summary.scalar("v1_loss", spec.loss)
            tf.compat.v1.summary.histogram("v1_features", features["x"])
            tf.summary.scalar("v2_loss", spec.loss)
        return spec

    est = ke.Estimator(model_fn, model_dir=str(tmp_path), params=PARAMS)
    est.train(input_fn(X, Y), steps=3)
    assert est.evaluate(input_fn(X, Y, repeat=False))["global_step"] == 3


def test_metric_with_grouped_update_op_reads_value_after_all_updates(tmp_path):
    def model_fn(features, labels, mode):
        logits = keras.layers.Dense(3)(features["x"])
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        if mode == ke.ModeKeys.TRAIN:
            optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
            train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
            return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)
        total = tf.compat.v1.get_variable(
            "label_total", shape=[], collections=[tf.compat.v1.GraphKeys.LOCAL_VARIABLES],
            initializer=tf.zeros_initializer(),
        )
        value = tf.identity(total)  # read before this step's update
        update = tf.group(total.assign_add(tf.reduce_sum(tf.cast(labels, tf.float32))))
        return ke.EstimatorSpec(mode, loss=loss, eval_metric_ops={"label_sum": (value, update)})

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(input_fn(X, Y), steps=1)
    metrics = est.evaluate(input_fn(X, Y, repeat=False))
    assert metrics["label_sum"] == pytest.approx(float(Y.sum()))
    # Metric variables start from zero again in the next evaluation.
    assert est.evaluate(input_fn(X, Y, repeat=False))["label_sum"] == pytest.approx(float(Y.sum()))
