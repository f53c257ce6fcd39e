"""Evaluation and prediction input must match what the model trained on."""

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


def test_predict_refuses_features_of_another_dtype(trained):
    # tf.estimator refused them; casting would silently change the input.
    with pytest.raises(ValueError, match=r"'x': trained on float32, got int32.*Cast them"):
        list(trained.predict(_features(x=(X * 10).astype("int32"))))


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
