"""Canned DNN, wide-and-deep and RNN estimators given features that are no dict.

An input_fn returning a bare Tensor as features made tf.estimator 2.15's
DNN and DNNLinearCombined estimators raise ValueError('features should be a
dictionary of `Tensor`s. Given type: ...'), and its RNN estimators
ValueError('inputs should be a dictionary of `Tensor`s. ...'), at the first
train() (measured in the reference venv).
"""

import pytest
import tensorflow as tf

import keras_estimator as ke

fc = tf.feature_column
AGE = fc.numeric_column("age")
NOT_A_DICT = "^features should be a dictionary of `Tensor`s. Given type: "


def _tensor_features():
    return tf.constant([[10.0], [8.0]]), tf.constant([[1], [0]])


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda d: ke.DNNClassifier([2], [AGE], model_dir=d), NOT_A_DICT),
        (lambda d: ke.DNNRegressor([2], [AGE], model_dir=d), NOT_A_DICT),
        (
            lambda d: ke.compat.estimator.DNNClassifier(
                [2], [tf.compat.v1.feature_column.numeric_column("age")], model_dir=d
            ),
            NOT_A_DICT,
        ),
        (
            lambda d: ke.DNNLinearCombinedClassifier(
                model_dir=d, dnn_hidden_units=[2], dnn_feature_columns=[AGE]
            ),
            NOT_A_DICT,
        ),
        (
            lambda d: ke.DNNLinearCombinedClassifier(
                model_dir=d, linear_feature_columns=[AGE]
            ),
            NOT_A_DICT,
        ),
        (
            lambda d: ke.experimental.RNNClassifier(
                [fc.sequence_numeric_column("age")], units=[2], model_dir=d
            ),
            "^inputs should be a dictionary of `Tensor`s. Given type: ",
        ),
    ],
    ids=[
        "DNNClassifier",
        "DNNRegressor",
        "v1-DNNClassifier",
        "wide-and-deep-dnn",
        "wide-and-deep-linear",
        "RNNClassifier",
    ],
)
def test_a_tensor_as_features_is_refused_as_2_15_refused_it(make, match, tmp_path):
    estimator = make(str(tmp_path))
    with pytest.raises(ValueError, match=match):
        estimator.train(_tensor_features, steps=1)
