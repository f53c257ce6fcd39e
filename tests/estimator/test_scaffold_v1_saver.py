"""A `tf.compat.v1.train.Saver` as the EstimatorSpec's Scaffold saver.

tf.estimator 2.15 saved and restored model_dir's checkpoints through it: in
training its `max_to_keep` replaced RunConfig's `keep_checkpoint_max`; in
evaluation, prediction and export its `var_list` said which checkpoint key
each variable is read from (a slow average of the weights, say).

The expected figures are tf.estimator 2.15's (tensorflow-cpu 2.15.1,
tensorflow-estimator 2.15.0), from this module's model_fn run there: y =
2x + 1 on x = 0, 1/8, ..., 7/8 in batches of 4, gradient descent (0.5) from
zero weights, `w_slow` an average updated after each step, checkpoints every
2 steps, 7 steps, then 3 more.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator

v1 = tf.compat.v1

_X = (np.arange(8, dtype=np.float32) / 8).reshape(8, 1)
_Y = 2 * _X + 1

# 2.15: w and w_slow after 7 steps, the loss evaluate() gives reading w
# from w_slow; the same after 3 more steps; predictions for x = 0, 1/8, 2/8
# (and the exported model's) reading w from w_slow after those 10 steps.
_W_7, _W_SLOW_7, _EVAL_LOSS_7 = 1.3448459, 1.2796223, 0.08610743
_W_10, _W_SLOW_10, _EVAL_LOSS_10 = 1.5308675, 1.4932005, 0.042099956
_PREDICTED_10 = [1.0767055, 1.2633555, 1.4500055]


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(4)


def _predict_input_fn():
    return tf.data.Dataset.from_tensor_slices({"x": _X[:3]}).batch(3)


def _model_fn(train_keys=None, eval_keys=None):
    def model_fn(features, labels, mode):
        w = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer())
        b = v1.get_variable("b", [1], initializer=v1.zeros_initializer())
        step = v1.train.get_or_create_global_step()
        pred = tf.matmul(features["x"], w) + b
        if mode == keras_estimator.ModeKeys.PREDICT:
            saver = v1.train.Saver({"w_slow": w, "b": b, "global_step": step})
            return keras_estimator.EstimatorSpec(
                mode, predictions={"p": pred}, scaffold=v1.train.Scaffold(saver=saver)
            )
        loss = v1.losses.mean_squared_error(labels, pred)
        if mode == keras_estimator.ModeKeys.EVAL:
            keys = eval_keys or {"w_slow": w, "b": b, "global_step": step}
            saver = v1.train.Saver(keys(w, b, step) if callable(keys) else keys)
            return keras_estimator.EstimatorSpec(
                mode, loss=loss, scaffold=v1.train.Scaffold(saver=saver)
            )
        w_slow = v1.get_variable(
            "w_slow", [1, 1], initializer=v1.zeros_initializer(), trainable=False
        )
        minimize = v1.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=step)
        with tf.control_dependencies([minimize]):
            train_op = w_slow.assign(0.5 * w_slow + 0.5 * w)
        var_list = train_keys(w, b, step) if train_keys else None
        saver = v1.train.Saver(var_list, max_to_keep=2)
        return keras_estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, scaffold=v1.train.Scaffold(saver=saver)
        )

    return model_fn


def _estimator(model_dir, **model_fn_args):
    return keras_estimator.Estimator(
        _model_fn(**model_fn_args),
        str(model_dir),
        config=keras_estimator.RunConfig(save_checkpoints_steps=2),
    )


def _checkpoint_steps(model_dir):
    return sorted(
        int(name[len("model.ckpt-") : -len(".index")])
        for name in os.listdir(model_dir)
        if name.startswith("model.ckpt-") and name.endswith(".index")
    )


@pytest.fixture(scope="module")
def trained_7(tmp_path_factory):
    model_dir = tmp_path_factory.mktemp("trained_7")
    est = _estimator(model_dir)
    est.train(_input_fn, steps=7)
    return est


def test_the_training_saver_s_max_to_keep_replaces_run_config_s(trained_7):
    # RunConfig's keep_checkpoint_max (5) would keep steps 0, 2, 4, 6, 7.
    assert _checkpoint_steps(trained_7.model_dir) == [6, 7]
    assert trained_7.get_variable_value("w")[0, 0] == pytest.approx(_W_7, rel=1e-6)
    assert trained_7.get_variable_value("w_slow")[0, 0] == pytest.approx(_W_SLOW_7, rel=1e-6)


def test_evaluation_reads_each_variable_from_the_saver_s_key(trained_7):
    results = trained_7.evaluate(_input_fn, steps=2)
    assert results["loss"] == pytest.approx(_EVAL_LOSS_7, rel=1e-5)
    assert results["global_step"] == 7


def test_training_after_such_an_evaluation_goes_on_from_the_trained_values(tmp_path):
    est = _estimator(tmp_path)
    est.train(_input_fn, steps=7)
    assert est.evaluate(_input_fn, steps=2)["loss"] == pytest.approx(_EVAL_LOSS_7, rel=1e-5)
    est.train(_input_fn, steps=3)
    assert est.get_variable_value("w")[0, 0] == pytest.approx(_W_10, rel=1e-5)
    assert est.get_variable_value("w_slow")[0, 0] == pytest.approx(_W_SLOW_10, rel=1e-5)
    assert est.evaluate(_input_fn, steps=2)["loss"] == pytest.approx(_EVAL_LOSS_10, rel=1e-5)
    predicted = [float(p["p"][0]) for p in est.predict(_predict_input_fn)]
    np.testing.assert_allclose(predicted, _PREDICTED_10, rtol=1e-5)
    # Another Estimator on the model_dir reads the same.
    again = _estimator(tmp_path)
    assert again.evaluate(_input_fn, steps=2)["loss"] == pytest.approx(_EVAL_LOSS_10, rel=1e-5)

    def serving_input_receiver_fn():
        x = v1.placeholder(tf.float32, [None, 1], name="x")
        return keras_estimator.export.ServingInputReceiver({"x": x}, {"x": x})

    path = est.export_saved_model(str(tmp_path / "export"), serving_input_receiver_fn)
    served = tf.saved_model.load(path).signatures["serving_default"](x=tf.constant(_X[:3]))
    np.testing.assert_allclose(served["p"].numpy().ravel(), _PREDICTED_10, rtol=1e-5)


def test_a_training_saver_listing_variables_by_their_names_saves_them_all(tmp_path):
    # 2.15 wrote only the listed variables; here the checkpoint holds every
    # variable (under the same names), so training resumes from it.
    est = _estimator(tmp_path, train_keys=lambda w, b, step: [w, b, step])
    est.train(_input_fn, steps=7)
    assert _checkpoint_steps(tmp_path) == [6, 7]
    assert est.get_variable_value("w")[0, 0] == pytest.approx(_W_7, rel=1e-6)


def test_a_training_saver_renaming_variables_is_refused_with_the_fix(tmp_path):
    est = _estimator(tmp_path, train_keys=lambda w, b, step: {"weights": w, "b": b})
    with pytest.raises(ValueError, match="other checkpoint keys") as raised:
        est.train(_input_fn, steps=1)
    assert "{'w': 'weights'}" in str(raised.value)
    assert "EVAL or PREDICT" in str(raised.value)


def test_an_evaluation_saver_key_missing_from_the_checkpoint_is_an_error_naming_it(
    trained_7,
):
    est = keras_estimator.Estimator(
        _model_fn(eval_keys=lambda w, b, step: {"w_fast": w, "b": b, "global_step": step}),
        trained_7.model_dir,
    )
    with pytest.raises(ValueError, match="^Key w_fast not found in checkpoint") as raised:
        est.evaluate(_input_fn, steps=1)
    assert "w_slow" in str(raised.value)


def test_tensorflow_s_saver_builds_its_ops_again_after_training(tmp_path):
    build = v1.train.Saver.build
    _estimator(tmp_path).train(_input_fn, steps=1)
    assert v1.train.Saver.build is build
    with tf.Graph().as_default():
        v1.Variable(1.0, name="v")
        assert v1.train.Saver().saver_def is not None


def test_an_evaluation_saver_reading_moving_averages_gives_2_15s_loss(tmp_path):
    # The moving-average evaluation idiom: training keeps averages with
    # tf.compat.v1.train.ExponentialMovingAverage; evaluation reads each
    # weight from its average's key. 2.15, 3 steps: w 2.0198317, its
    # average 1.5026832, and the loss evaluated with the average 1.50278.
    def model_fn(features, labels, mode):
        w = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer())
        loss = v1.losses.mean_squared_error(labels, tf.matmul(features["x"], w))
        ema = v1.train.ExponentialMovingAverage(0.5)
        step = v1.train.get_global_step()
        if mode == keras_estimator.ModeKeys.TRAIN:
            minimize = v1.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=step)
            with tf.control_dependencies([minimize]):
                train_op = ema.apply([w])
            return keras_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
        saver = v1.train.Saver({ema.average_name(w): w, "global_step": step})
        return keras_estimator.EstimatorSpec(
            mode, loss=loss, scaffold=v1.train.Scaffold(saver=saver)
        )

    est = keras_estimator.Estimator(model_fn, str(tmp_path))
    est.train(_input_fn, steps=3)
    assert est.get_variable_value("w")[0, 0] == pytest.approx(2.0198317, rel=1e-6)
    average = est.get_variable_value("w/ExponentialMovingAverage")[0, 0]
    assert average == pytest.approx(1.5026832, rel=1e-6)
    assert est.evaluate(_input_fn, steps=2)["loss"] == pytest.approx(1.50278, rel=1e-5)


def test_variables_to_restore_gives_2_15s_evaluation_predictions_and_export(tmp_path):
    # The same idiom through `ema.variables_to_restore()` (the tensorflow/tpu
    # models' evaluation): trainable variables from their averages, the
    # others (a non-trainable counter, the global step) from their own
    # keys. 2.15 on x = 1..4, y = 2x + 1, batches of 2, gradient descent
    # (0.05), averages of w and b (decay 0.5), 3 steps.
    seen_keys = []

    def model_fn(features, labels, mode):
        w = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer())
        b = v1.get_variable("b", [1], initializer=v1.zeros_initializer())
        counter = v1.get_variable("c", [], initializer=v1.zeros_initializer(), trainable=False)
        pred = tf.matmul(features["x"], w) + b
        loss = None if labels is None else v1.losses.mean_squared_error(labels, pred)
        ema = v1.train.ExponentialMovingAverage(0.5)
        step = v1.train.get_global_step()
        if mode == keras_estimator.ModeKeys.TRAIN:
            minimize = v1.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step)
            with tf.control_dependencies([minimize]):
                train_op = tf.group(ema.apply([w, b]), v1.assign_add(counter, 1.0))
            return keras_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
        keys = ema.variables_to_restore()
        seen_keys.append(sorted(keys))
        return keras_estimator.EstimatorSpec(
            mode,
            loss=loss,
            predictions=pred,
            scaffold=v1.train.Scaffold(saver=v1.train.Saver(keys)),
        )

    x = np.arange(1, 5, dtype=np.float32).reshape(4, 1)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, 2 * x + 1)).batch(2).repeat()

    est = keras_estimator.Estimator(model_fn, str(tmp_path / "model"))
    est.train(input_fn, steps=3)
    assert est.get_variable_value("w/ExponentialMovingAverage")[0, 0] == pytest.approx(
        1.9284999, rel=1e-6
    )
    assert est.evaluate(input_fn, steps=2)["loss"] == pytest.approx(0.22453772, rel=1e-5)
    assert seen_keys[-1] == [
        "b/ExponentialMovingAverage",
        "c",
        "global_step",
        "w/ExponentialMovingAverage",
    ]
    expected = [2.6401875, 4.5686874, 6.4971871, 8.4256878]
    predicted = [
        float(p[0])
        for p in est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(2))
    ]
    np.testing.assert_allclose(predicted, expected, rtol=1e-6)

    def serving_input_receiver_fn():
        placeholder = v1.placeholder(tf.float32, [None, 1])
        return keras_estimator.export.ServingInputReceiver({"x": placeholder}, {"x": placeholder})

    path = est.export_saved_model(str(tmp_path / "export"), serving_input_receiver_fn)
    served = tf.saved_model.load(path).signatures["serving_default"](x=tf.constant(x))
    np.testing.assert_allclose(np.ravel(served["output"]), expected, rtol=1e-6)
    # TensorFlow's own method is back outside the model_fn.
    assert v1.train.ExponentialMovingAverage.variables_to_restore.__module__ == (
        v1.train.ExponentialMovingAverage.__module__
    )


def test_a_hook_saves_with_a_saver_the_model_fn_made_as_in_2_15(tmp_path):
    # A "save the best model" hook: the model_fn makes a Saver of some
    # variables and a hook saves with it. 2.15, 3 steps: best-7 holds only
    # w, 2.0198317.
    saved = []

    class SaveAtEnd(keras_estimator.SessionRunHook):
        def __init__(self, saver):
            self.saver = saver

        def end(self, session):
            path = str(tmp_path / "best" / "best")
            saved.append(self.saver.save(session, path, global_step=7))

    def model_fn(features, labels, mode):
        w = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer())
        loss = v1.losses.mean_squared_error(labels, tf.matmul(features["x"], w))
        train_op = v1.train.GradientDescentOptimizer(0.5).minimize(
            loss, global_step=v1.train.get_global_step()
        )
        saver = v1.train.Saver([w], max_to_keep=1)
        return keras_estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, training_hooks=[SaveAtEnd(saver)]
        )

    est = keras_estimator.Estimator(model_fn, str(tmp_path / "model"))
    est.train(_input_fn, steps=3)
    assert [os.path.basename(path) for path in saved] == ["best-7"]
    reader = tf.train.load_checkpoint(saved[0])
    assert sorted(reader.get_variable_to_shape_map()) == ["w"]
    assert reader.get_tensor("w")[0, 0] == pytest.approx(2.0198317, rel=1e-6)


def test_under_a_mirrored_strategy_the_saver_s_keys_give_2_15s_figures(tmp_path):
    # 2.15 under MirroredStrategy on two logical CPUs (ReductionToOneDevice).
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    est = keras_estimator.Estimator(
        _model_fn(),
        str(tmp_path),
        config=keras_estimator.RunConfig(save_checkpoints_steps=2, train_distribute=strategy),
    )
    est.train(_input_fn, steps=7)
    assert _checkpoint_steps(tmp_path) == [6, 7]
    assert est.evaluate(_input_fn, steps=2)["loss"] == pytest.approx(0.056563348, rel=1e-5)
    est.train(_input_fn, steps=3)
    assert est.get_variable_value("w")[0, 0] == pytest.approx(1.3801882, rel=1e-5)
    assert est.evaluate(_input_fn, steps=2)["loss"] == pytest.approx(0.036735184, rel=1e-5)
    predicted = [float(p["p"][0]) for p in est.predict(_predict_input_fn)]
    np.testing.assert_allclose(predicted, [1.290969, 1.4573236, 1.623678], rtol=1e-5)


def test_train_and_evaluate_s_own_saves_keep_the_training_saver_s_max_to_keep(tmp_path):
    # With no RunConfig saves, the evaluation every 2 steps saves the step it
    # evaluates; RunConfig's keep_checkpoint_max (5) would keep 2, 4, 6.
    est = keras_estimator.Estimator(
        _model_fn(),
        str(tmp_path),
        config=keras_estimator.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None),
    )
    keras_estimator.train_and_evaluate(
        est,
        keras_estimator.TrainSpec(_input_fn, max_steps=6),
        keras_estimator.EvalSpec(_input_fn, steps=1, throttle_secs=0),
        eval_every_n_steps=2,
    )
    assert _checkpoint_steps(tmp_path) == [4, 6]
