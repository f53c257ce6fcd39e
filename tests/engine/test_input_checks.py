"""Evaluation and prediction input against what the model trained on."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn

X, Y = make_data()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    est = ke.Estimator(
        mlp_model_fn,
        model_dir=str(tmp_path_factory.mktemp("trained")),
        params={"optimizer": "sgd"},
    )
    est.train(input_fn(X, Y), steps=3)
    return est


def _features(**columns):
    return lambda: tf.data.Dataset.from_tensor_slices(columns).batch(8)


def test_features_of_another_dtype_than_training_run_through_feature_columns(tmp_path):
    # The premade-estimators tutorial: trained on pandas' float64 columns,
    # predicts on a dict of Python floats (float32). 2.15 built a new graph
    # per call and numeric_column cast the input; so here.
    columns = [tf.feature_column.numeric_column(key) for key in ("a", "b")]
    est = ke.LinearClassifier(columns, n_classes=3, model_dir=str(tmp_path))
    x64 = {"a": X[:, 0].astype("float64"), "b": X[:, 1].astype("float64")}
    est.train(lambda: tf.data.Dataset.from_tensor_slices((x64, Y)).batch(8), steps=3)
    as_given = [p["logits"] for p in est.predict(_features(**x64))]
    floats = {key: [float(v) for v in values] for key, values in x64.items()}
    as_floats = [p["logits"] for p in est.predict(_features(**floats))]
    assert len(as_floats) == len(X)
    np.testing.assert_allclose(as_floats, as_given, atol=1e-5)
    x32 = {key: values.astype("float32") for key, values in x64.items()}
    assert est.evaluate(lambda: tf.data.Dataset.from_tensor_slices((x32, Y)).batch(8))[
        "global_step"
    ] == 3


def test_a_dtype_the_model_fn_cannot_use_gets_its_own_error(trained):
    # A dense layer trained on float32 cannot multiply float64 input: the
    # model_fn's own error, not a refusal up front.
    with pytest.raises(TypeError, match=r"MatMul|float64") as caught:
        list(trained.predict(_features(x=X.astype("float64"))))
    assert "other dtypes than training" not in str(caught.value)


def test_a_feature_model_fn_does_not_read_may_be_left_out(trained, tmp_path):
    def model_fn(features, labels, mode, params):
        return mlp_model_fn({"x": features["x"]}, labels, mode, params)

    est = ke.Estimator(model_fn, model_dir=str(tmp_path), params={"optimizer": "sgd"})
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": X, "id": Y}, Y)).batch(8), steps=2)
    assert len(list(est.predict(_features(x=X)))) == len(X)


def test_a_feature_model_fn_reads_but_input_lacks_is_named(trained):
    def renamed():
        return tf.data.Dataset.from_tensor_slices(({"pixels": X}, Y)).batch(8)

    with pytest.raises(
        ValueError, match=r"reads feature 'x'.*gives \['pixels'\]; training had \['x'\]"
    ):
        trained.evaluate(renamed)


def test_same_dtypes_and_extra_features_are_accepted(trained):
    predictions = list(trained.predict(_features(x=X, unused=Y)))
    assert len(predictions) == len(X)
    assert trained.evaluate(input_fn(X, Y, repeat=False))["global_step"] == 3
