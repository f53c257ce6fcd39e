"""Bad input raises tf.estimator 2.15's exception type with its first phrase.

Programs and tf.estimator's own tests catch these by type and match on the
phrase (estimator_test.py's assertRaisesRegexp cases reachable through the
public API); the rest of each message names the value received and the fix.
"""

from __future__ import annotations

import pytest
import tensorflow as tf

import keras_estimator as ke


def _model_fn(features, labels, mode):
    weight = tf.compat.v1.get_variable(
        "w", [], initializer=tf.compat.v1.zeros_initializer()
    )
    loss = tf.reduce_sum(features["x"]) * weight
    step = tf.compat.v1.train.get_or_create_global_step()
    return ke.EstimatorSpec(
        mode,
        loss=loss,
        train_op=tf.compat.v1.assign_add(step, 1),
        predictions={"y": features["x"]},
    )


def _input_fn():
    return {"x": tf.ones([2, 1])}, tf.ones([2, 1])


def test_model_fn_none_is_a_value_error():
    with pytest.raises(
        ValueError, match=r"model_fn must be provided to Estimator, got None"
    ):
        ke.Estimator(model_fn=None)
    # 2.15's upstream pattern.
    with pytest.raises(ValueError, match=r"model_fn.* must be"):
        ke.Estimator(model_fn=None)


def test_model_fn_that_is_not_callable_stays_a_type_error():
    with pytest.raises(TypeError, match=r"model_fn must be callable, got 'abc'"):
        ke.Estimator(model_fn="abc")


def test_config_that_is_not_a_run_config_is_a_value_error():
    with pytest.raises(
        ValueError,
        match=r"config must be an instance of `RunConfig`, but provided 'NotARunConfig' \(str\)",
    ):
        ke.Estimator(model_fn=_model_fn, config="NotARunConfig")


@pytest.mark.parametrize("method", ["train", "evaluate", "predict"])
def test_model_fn_returning_something_else_is_a_value_error(tmp_path, method):
    def model_fn(features, labels, mode):
        return tf.constant(1.0)

    est = ke.Estimator(model_fn=model_fn, model_dir=str(tmp_path))
    with pytest.raises(
        ValueError, match=r"model_fn should return an EstimatorSpec, got SymbolicTensor"
    ):
        if method == "train":
            est.train(_input_fn, steps=1)
        elif method == "evaluate":
            est.evaluate(_input_fn, steps=1)
        else:
            next(est.predict(_input_fn))


@pytest.mark.parametrize("container", [tuple, list])
@pytest.mark.parametrize("length", [1, 3])
def test_input_fn_returning_a_tuple_of_other_length_is_a_value_error(
    tmp_path, container, length
):
    def input_fn():
        features, labels = _input_fn()
        return container([features, labels, labels][:length])

    est = ke.Estimator(model_fn=_model_fn, model_dir=str(tmp_path))
    with pytest.raises(
        ValueError,
        match=r"input_fn should return \(features, labels\) as a len 2 tuple: "
        rf"input_fn returned {container.__name__} of {length} elements",
    ):
        est.train(input_fn, steps=1)


def test_a_dataset_of_3_tuples_is_a_value_error_as_in_2_15(tmp_path):
    def input_fn():
        features, labels = _input_fn()
        return tf.data.Dataset.from_tensors((features, labels, labels))

    est = ke.Estimator(model_fn=_model_fn, model_dir=str(tmp_path))
    with pytest.raises(
        ValueError,
        match=r"^input_fn should return \(features, labels\) as a len 2 tuple: "
        r"input_fn's dataset yields a tuple of 3 elements",
    ):
        est.train(input_fn, steps=1)


def _halfway_model_fn(features, labels, mode):
    # Each step moves w halfway to the feature, a Python number here.
    step = tf.compat.v1.train.get_or_create_global_step()
    w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.zeros_initializer())
    target = tf.cast(features, tf.float32)
    return ke.EstimatorSpec(
        mode,
        loss=tf.square(w - target),
        train_op=tf.group(
            tf.compat.v1.assign_add(step, 1), tf.compat.v1.assign_add(w, 0.5 * (target - w))
        ),
        predictions={"y": tf.reshape(w, [1])},
    )


# 2.15's w after 2 steps, evaluate()'s loss, and w after one more step on
# (value, value).
@pytest.mark.parametrize(
    "value, w, loss, w_after_tuple",
    [(3, 2.25, 0.5625, 2.625), (2.5, 1.875, 0.390625, 2.1875), (True, 0.75, 0.0625, 0.875)],
)
def test_an_input_fn_returning_a_number_trains_as_in_2_15(tmp_path, value, w, loss, w_after_tuple):
    est = ke.Estimator(model_fn=_halfway_model_fn, model_dir=str(tmp_path))
    est.train(lambda: value, steps=2)
    assert est.get_variable_value("w") == w
    assert est.evaluate(lambda: value, steps=1)["loss"] == loss
    est.train(lambda: (value, value), steps=1)
    assert est.get_variable_value("w") == w_after_tuple


def test_features_keyed_by_ints_train_and_evaluate_as_in_2_15(tmp_path):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.constant_initializer(2.0))
        p = (features[0] + features[1]) * w
        loss = tf.reduce_mean(tf.square(p - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return ke.EstimatorSpec(mode, predictions={"p": p}, loss=loss, train_op=train_op)

    def input_fn():
        features = {0: tf.constant([1.0]), 1: tf.constant([2.0])}
        return tf.data.Dataset.from_tensors((features, tf.constant([3.0]))).repeat()

    est = ke.Estimator(model_fn=model_fn, model_dir=str(tmp_path))
    est.train(input_fn, steps=3)
    # tf.estimator 2.15's figures.
    assert est.get_variable_value("w") == pytest.approx(0.48799992, rel=1e-6)
    assert est.evaluate(input_fn, steps=1)["loss"] == pytest.approx(2.3592968, rel=1e-6)


def test_features_keyed_by_ints_beside_strings_are_a_type_error(tmp_path):
    est = ke.Estimator(model_fn=_model_fn, model_dir=str(tmp_path))
    with pytest.raises(TypeError, match=r"features' keys must all be strings .* got keys"):
        est.train(lambda: ({0: tf.ones([1]), "x": tf.ones([1])}, tf.ones([1])), steps=1)


@pytest.mark.parametrize("method", ["train", "evaluate", "predict"])
def test_a_hook_that_is_not_a_session_run_hook_keeps_2_15s_phrase(tmp_path, method):
    est = ke.Estimator(model_fn=_model_fn, model_dir=str(tmp_path))
    est.train(_input_fn, steps=1)
    with pytest.raises(
        TypeError, match=r"Hooks must be a SessionRunHook, given: 'NotAHook'\. .*lacks"
    ):
        if method == "train":
            est.train(_input_fn, steps=1, hooks=["NotAHook"])
        elif method == "evaluate":
            est.evaluate(_input_fn, steps=1, hooks=["NotAHook"])
        else:
            next(est.predict(_input_fn, hooks=["NotAHook"]))


@pytest.mark.parametrize("call", ["get_variable_names", "get_variable_value"])
def test_variables_before_training_keep_2_15s_phrase(tmp_path, call):
    est = ke.Estimator(model_fn=_model_fn, model_dir=str(tmp_path))
    args = ("w",) if call == "get_variable_value" else ()
    with pytest.raises(
        ValueError,
        match=r"Could not find trained model in model_dir: .* has no checkpoint yet",
    ):
        getattr(est, call)(*args)


# estimator_test.py (tf.estimator v2.15.0) cases run through a shim against
# this package, each with 2.15's pattern.


def test_a_bad_config_is_reported_before_a_missing_model_fn():
    with pytest.raises(ValueError, match=r"an instance of `RunConfig`"):
        ke.Estimator(model_fn=None, config="NotARunConfig")


def test_params_for_a_model_fn_without_params_keeps_2_15s_phrase():
    with pytest.raises(
        ValueError,
        match=r"^model_fn \(.*\) does not include params argument, but params "
        r"\(\{'a': 1\}\) is passed to Estimator",
    ):
        ke.Estimator(model_fn=_model_fn, params={"a": 1})


def test_two_model_dirs_keep_2_15s_phrase(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"^`model_dir` are set both in constructor and `RunConfig`, but "
        r"with different values",
    ):
        ke.Estimator(
            model_fn=_model_fn,
            model_dir=str(tmp_path / "a"),
            config=ke.RunConfig(model_dir=str(tmp_path / "b")),
        )


def test_saving_listeners_without_a_checkpoint_saver_are_refused(tmp_path):
    # 2.15 refused them: no CheckpointSaverHook would ever call them. Here
    # they were taken and never called.
    class Listener(ke.CheckpointSaverListener):
        calls = 0

        def after_save(self, session, global_step_value):
            Listener.calls += 1

    est = ke.Estimator(
        model_fn=_model_fn,
        model_dir=str(tmp_path),
        config=ke.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None),
    )
    with pytest.raises(
        ValueError, match=r"^There should be a CheckpointSaverHook to use saving_listeners"
    ):
        est.train(_input_fn, steps=1, saving_listeners=[Listener()])
    # With a saver hook of the program's own, they attach to it, as in 2.15.
    saver = ke.CheckpointSaverHook(str(tmp_path), save_steps=1)
    est.train(_input_fn, steps=1, hooks=[saver], saving_listeners=[Listener()])
    assert Listener.calls >= 1


def _predicting(tmp_path, predictions_of):
    def model_fn(features, labels, mode):
        step = tf.compat.v1.train.get_or_create_global_step()
        loss = tf.reduce_sum(features["x"]) * 0.0
        return ke.EstimatorSpec(
            mode,
            loss=loss,
            train_op=tf.compat.v1.assign_add(step, 1),
            predictions=predictions_of(features),
        )

    est = ke.Estimator(model_fn=model_fn, model_dir=str(tmp_path))
    est.train(_input_fn, steps=1)
    return est


def test_predict_keys_for_a_single_tensor_keep_2_15s_phrase(tmp_path):
    est = _predicting(tmp_path, lambda features: features["x"])
    with pytest.raises(
        ValueError,
        match=r"^predict_keys argument is not valid in case of non-dict predictions",
    ):
        next(est.predict(_input_fn, predict_keys=["y"]))


def test_predictions_of_different_batch_lengths_keep_2_15s_phrase(tmp_path):
    est = _predicting(
        tmp_path, lambda f: {"y1": f["x"][:1], "y2": f["x"]}
    )
    with pytest.raises(
        ValueError, match=r"^Batch length of predictions should be same"
    ):
        next(est.predict(_input_fn))


def test_train_on_an_evaluator_task_keeps_2_15s_error(tmp_path, monkeypatch):
    # 2.15 refused it; here it ran a step that no checkpoint kept.
    monkeypatch.setenv(
        "TF_CONFIG",
        '{"cluster": {"chief": ["localhost:1"], "worker": ["localhost:2"]}, '
        '"task": {"type": "evaluator", "index": 0}}',
    )
    est = ke.Estimator(model_fn=_model_fn, model_dir=str(tmp_path))
    assert est.config.task_type == "evaluator"
    with pytest.raises(
        ValueError, match=r"^Train has been called wrong configuration"
    ):
        est.train(_input_fn, steps=1)
    assert est.latest_checkpoint() is None
