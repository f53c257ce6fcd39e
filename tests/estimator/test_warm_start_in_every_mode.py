"""`warm_start_from` in `evaluate()` and `predict()` too, as 2.15 did.

tf.estimator 2.15 warm-started every call that found no checkpoint in
model_dir (its `_maybe_warm_start` ran after the model_fn in training,
evaluation and prediction alike). The expected figures are tf.estimator
2.15's (tensorflow-cpu 2.15.1, tensorflow-estimator 2.15.0) on the same
program.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator

v1 = tf.compat.v1

_X = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
# 2.15: a LinearRegressor trained 50 steps on y = 2x + 1 predicts these; a
# new one warm-started from it (only its weights) evaluates this loss.
_PREDICTED = [3.1585, 4.7576, 6.3566, 7.9557]
_LOSS_WEIGHTS_ONLY = 0.3971


def _input_fn():
    return tf.data.Dataset.from_tensors(({"x": _X}, 2 * _X + 1))


def _model_fn_starting_at(x0):
    def model_fn(features, labels, mode):
        x = v1.get_variable("x", initializer=x0)
        y = tf.reshape(x + 1.0, [1])
        return keras_estimator.EstimatorSpec(
            mode,
            predictions={"y": y},
            loss=tf.constant(1.0),
            train_op=v1.assign_add(v1.train.get_global_step(), 1),
            eval_metric_ops={"x_plus_1": v1.metrics.mean(x + 1.0)},
        )

    return model_fn


@pytest.fixture(scope="module")
def trained_at_42(tmp_path_factory):
    model_dir = str(tmp_path_factory.mktemp("x42"))
    est = keras_estimator.Estimator(_model_fn_starting_at(42.0), model_dir)
    est.train(lambda: ({"x": tf.constant([[1.0]])}, tf.constant([[1.0]])), steps=10)
    return model_dir


def _one():
    return {"x": tf.constant([[1.0]])}, tf.constant([[1.0]])


def test_evaluate_without_a_checkpoint_warm_starts(trained_at_42, tmp_path):
    est = keras_estimator.Estimator(
        _model_fn_starting_at(62.0), str(tmp_path), warm_start_from=trained_at_42
    )
    assert est.evaluate(_one, steps=1)["x_plus_1"] == pytest.approx(43.0)


def test_predict_without_a_checkpoint_warm_starts(trained_at_42, tmp_path):
    est = keras_estimator.Estimator(
        _model_fn_starting_at(62.0), str(tmp_path), warm_start_from=trained_at_42
    )
    assert float(np.ravel(next(est.predict(_one))["y"])[0]) == pytest.approx(43.0)
    # Training then goes on from the warm-started value, as 2.15's did.
    est.train(_one, steps=1)
    assert float(est.get_variable_value("x")) == pytest.approx(42.0)


def test_canned_estimators_warm_start_in_predict_and_evaluate(tmp_path):
    columns = [v1.feature_column.numeric_column("x")]
    trained = keras_estimator.LinearRegressor(columns, model_dir=str(tmp_path / "a"))
    trained.train(lambda: _input_fn().repeat(), steps=50)
    fresh = keras_estimator.LinearRegressor(
        columns, model_dir=str(tmp_path / "b"), warm_start_from=trained.model_dir
    )
    predicted = [float(p["predictions"][0]) for p in fresh.predict(_input_fn)]
    assert predicted == pytest.approx(_PREDICTED, abs=1e-4)
    weights_only = keras_estimator.LinearRegressor(
        columns,
        model_dir=str(tmp_path / "c"),
        warm_start_from=keras_estimator.WarmStartSettings(
            trained.model_dir, vars_to_warm_start=".*weights.*"
        ),
    )
    assert weights_only.evaluate(_input_fn)["loss"] == pytest.approx(_LOSS_WEIGHTS_ONLY, abs=1e-4)


def test_warm_start_from_this_package_s_own_export(trained_at_42, tmp_path):
    # 2.15 warm-started from its exports (whose variables it saved by name);
    # this package's exports key them by object path.
    def model_fn_with_an_output(features, labels, mode):
        spec = _model_fn_starting_at(42.0)(features, labels, mode)
        outputs = {"p": keras_estimator.export.PredictOutput(spec.predictions)}
        return spec._replace(export_outputs=outputs)

    exporting = keras_estimator.Estimator(model_fn_with_an_output, trained_at_42)
    export_dir = exporting.export_saved_model(
        str(tmp_path / "export"),
        keras_estimator.export.build_raw_serving_input_receiver_fn(
            {"x": tf.TensorSpec([None, 1], tf.float32)}
        ),
    )
    export_dir = export_dir.decode() if isinstance(export_dir, bytes) else export_dir
    est = keras_estimator.Estimator(
        _model_fn_starting_at(36.0), str(tmp_path / "new"), warm_start_from=export_dir
    )
    assert float(np.ravel(next(est.predict(_one))["y"])[0]) == pytest.approx(43.0)
    est.train(_one, steps=1)
    assert float(est.get_variable_value("x")) == pytest.approx(42.0)
