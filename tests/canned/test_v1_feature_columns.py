"""V2 canned estimators refuse v1 feature columns as tf.estimator 2.15 did; v1 estimators take them.

In 2.15, `tf.estimator.DNN*`, `Linear*` and `DNNLinearCombined*` (the V2
classes) were built from any columns, then raised ValueError('Received a
feature column from TensorFlow v1, ...') when their model was built, in
train, evaluate and predict alike. The `tf.compat.v1.estimator` classes
trained on the same columns. Most `tf.compat.v1.feature_column` functions
return v2 columns; `tf.compat.v1.feature_column.shared_embedding_columns`
does not (2.15 refused it the same way, checked in the 2.15 environment).
`LinearSDCA` required v2 columns in every class, at construction.
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.tf_internals.feature_column_versions import are_v2_columns

V1_MESSAGE = r"^Received a feature column from TensorFlow v1, but this is a TensorFlow v2"


def _shared_v1_columns():
    a = tf.feature_column.categorical_column_with_identity("a", 4)
    b = tf.feature_column.categorical_column_with_identity("b", 4)
    with tf.Graph().as_default():  # as in 2.15, v1 shared embeddings need a graph
        return tf.compat.v1.feature_column.shared_embedding_columns([a, b], 2)


def _input_fn():
    features = {"a": [[1], [2]], "b": [[0], [3]], "x": [[1.0], [2.0]]}
    return tf.data.Dataset.from_tensor_slices((features, [[0], [1]])).batch(2).repeat()


def _predict_input_fn():
    features = {"a": [[1], [2]], "b": [[0], [3]], "x": [[1.0], [2.0]]}
    return tf.data.Dataset.from_tensor_slices(features).batch(2)


NUMERIC = tf.feature_column.numeric_column("x")

V2_ESTIMATORS = {
    "DNNClassifier": lambda v1, d: ke.DNNClassifier([2], v1 + [NUMERIC], model_dir=d),
    "DNNRegressor": lambda v1, d: ke.DNNRegressor([2], v1 + [NUMERIC], model_dir=d),
    "DNNEstimator": lambda v1, d: ke.DNNEstimator(
        ke.BinaryClassHead(), [2], v1 + [NUMERIC], model_dir=d
    ),
    "LinearClassifier": lambda v1, d: ke.LinearClassifier(v1 + [NUMERIC], model_dir=d),
    "LinearRegressor": lambda v1, d: ke.LinearRegressor(v1 + [NUMERIC], model_dir=d),
    "LinearEstimator": lambda v1, d: ke.LinearEstimator(
        ke.BinaryClassHead(), v1 + [NUMERIC], model_dir=d
    ),
    "DNNLinearCombinedClassifier(dnn part)": lambda v1, d: ke.DNNLinearCombinedClassifier(
        model_dir=d,
        dnn_feature_columns=v1,
        dnn_hidden_units=[2],
        linear_feature_columns=[NUMERIC],
    ),
    "DNNLinearCombinedRegressor(linear part)": lambda v1, d: ke.DNNLinearCombinedRegressor(
        model_dir=d,
        linear_feature_columns=v1,
        dnn_feature_columns=[NUMERIC],
        dnn_hidden_units=[2],
    ),
    "DNNLinearCombinedEstimator(linear only)": lambda v1, d: ke.DNNLinearCombinedEstimator(
        ke.BinaryClassHead(), model_dir=d, linear_feature_columns=v1
    ),
}


def test_shared_embedding_columns_of_v1_are_its_only_non_v2_public_columns():
    v1 = tf.compat.v1.feature_column
    category = v1.categorical_column_with_identity("a", 4)
    assert are_v2_columns(
        [
            v1.numeric_column("x"),
            v1.bucketized_column(v1.numeric_column("x"), [0.0]),
            v1.categorical_column_with_hash_bucket("h", 5),
            v1.embedding_column(category, 2),
            v1.indicator_column(category),
            v1.crossed_column(["a", "h"], 4),
            v1.weighted_categorical_column(category, "w"),
        ]
    )
    shared = _shared_v1_columns()
    assert not are_v2_columns(shared)
    assert not are_v2_columns([NUMERIC, shared[0]])


@pytest.mark.parametrize("name", sorted(V2_ESTIMATORS))
def test_v2_estimators_refuse_v1_columns_when_training(name, tmp_path):
    est = V2_ESTIMATORS[name](_shared_v1_columns(), str(tmp_path))  # builds, as in 2.15
    with pytest.raises(ValueError, match=V1_MESSAGE):
        est.train(_input_fn, steps=1)


def test_v2_estimators_refuse_v1_columns_in_evaluate_and_predict(tmp_path):
    est = ke.DNNClassifier([2], _shared_v1_columns() + [NUMERIC], model_dir=str(tmp_path))
    with pytest.raises(ValueError, match=V1_MESSAGE):
        est.evaluate(_input_fn, steps=1)
    with pytest.raises(ValueError, match=V1_MESSAGE):
        next(iter(est.predict(_predict_input_fn)))


@pytest.mark.parametrize(
    "make",
    [
        lambda v1, d: ke.compat.estimator.DNNClassifier([2], v1 + [NUMERIC], model_dir=d),
        lambda v1, d: ke.compat.estimator.LinearClassifier(v1 + [NUMERIC], model_dir=d),
        lambda v1, d: ke.compat.estimator.DNNLinearCombinedClassifier(
            model_dir=d,
            dnn_feature_columns=v1,
            dnn_hidden_units=[2],
            linear_feature_columns=v1 + [NUMERIC],
        ),
    ],
    ids=["DNNClassifier", "LinearClassifier", "DNNLinearCombinedClassifier"],
)
def test_v1_estimators_train_on_v1_columns(make, tmp_path):
    est = make(_shared_v1_columns(), str(tmp_path))
    est.train(_input_fn, steps=2)
    assert np.isfinite(est.evaluate(_input_fn, steps=1)["loss"])


@pytest.mark.parametrize(
    "make",
    [
        lambda columns: ke.LinearClassifier(columns, optimizer=ke.experimental.LinearSDCA("id")),
        lambda columns: ke.compat.estimator.LinearRegressor(
            columns, optimizer=ke.experimental.LinearSDCA("id")
        ),
    ],
    ids=["LinearClassifier", "v1 LinearRegressor"],
)
def test_linear_sdca_refuses_v1_columns_at_construction(make):
    with pytest.raises(ValueError, match=r"^V2 feature columns required when optimizer is a "):
        make(_shared_v1_columns() + [NUMERIC])
