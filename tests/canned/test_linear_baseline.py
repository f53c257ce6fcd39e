"""Linear and baseline estimators: arguments and what they learn (2.15 values:
tests/canned/test_premade_fixtures.py)."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

X = np.random.RandomState(2).normal(size=(64, 2)).astype(np.float32)
COLUMNS = [tf.feature_column.numeric_column("x", shape=[2])]


def test_bad_arguments_are_refused_naming_them(tmp_path):
    with pytest.raises(ValueError, match="sparse_combiner"):
        ke.LinearClassifier(COLUMNS, model_dir=str(tmp_path), sparse_combiner="max")
    with pytest.raises(TypeError, match="head must be"):
        ke.LinearEstimator("head", COLUMNS, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="Unsupported optimizer"):
        ke.BaselineRegressor(model_dir=str(tmp_path), optimizer="Nope")


def test_a_named_optimizer_trains_at_2_15s_rate(tmp_path):
    linear = ke.LinearRegressor(COLUMNS, model_dir=str(tmp_path / "linear"), optimizer="Adagrad")
    baseline = ke.BaselineRegressor(model_dir=str(tmp_path / "baseline"))
    data = lambda: tf.data.Dataset.from_tensors(({"x": X}, X[:, :1])).repeat()  # noqa: E731
    linear.train(data, steps=1)
    baseline.train(data, steps=1)
    assert linear.get_variable_value("training/Adagrad/learning_rate") == pytest.approx(0.2)
    assert baseline.get_variable_value("training/Ftrl/learning_rate") == pytest.approx(0.3)


def test_linear_regressor_learns_a_linear_function(tmp_path):
    y = X @ np.array([[2.0], [-1.0]], np.float32) + 0.5
    est = ke.LinearRegressor(COLUMNS, model_dir=str(tmp_path), optimizer="Adam")
    est.train(lambda: tf.data.Dataset.from_tensors(({"x": X}, y)).repeat(), steps=3000)
    np.testing.assert_allclose(
        est.get_variable_value("linear/linear_model/x/weights"), [[2.0], [-1.0]], atol=0.05
    )
    np.testing.assert_allclose(
        est.get_variable_value("linear/linear_model/bias_weights"), [0.5], atol=0.05
    )


def test_baseline_classifier_learns_the_label_distribution(tmp_path):
    labels = np.array([0] * 48 + [1] * 12 + [2] * 4)
    est = ke.BaselineClassifier(model_dir=str(tmp_path), n_classes=3, optimizer="Adam")
    est.train(lambda: tf.data.Dataset.from_tensors(({"x": X}, labels)).repeat(), steps=2000)
    probabilities = next(est.predict(lambda: tf.data.Dataset.from_tensors({"x": X[:1]})))
    np.testing.assert_allclose(probabilities["probabilities"], [0.75, 0.1875, 0.0625], atol=0.02)
