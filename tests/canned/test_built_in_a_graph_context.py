"""Canned estimators made inside the program's own `with tf.Graph().as_default():`.

tf.estimator 2.15 programs (and its own warm-start tests) often build an
Estimator, and the optimizers they give it, inside a graph context, then
train outside it. tf.estimator 2.15 accepted that: only a process-wide
`disable_eager_execution()` is refused.
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

AGE = tf.feature_column.numeric_column("age")
CITY = tf.feature_column.embedding_column(
    tf.feature_column.categorical_column_with_vocabulary_list(
        "city", vocabulary_list=["Mountain View", "Palo Alto"]
    ),
    dimension=2,
)


def _input_fn():
    features = {
        "age": tf.constant([[23.0], [31.0]]),
        "city": tf.constant([["Palo Alto"], ["Mountain View"]]),
    }
    return features, tf.constant([[0.0], [1.0]])


def test_wide_and_deep_made_in_a_graph_context_warm_starts_and_trains(tmp_path):
    # 2.15's DNNLinearCombinedWarmStartingTest: the source trains a step with
    # SGD; the estimator made in the graph context, with SGD at rate 0, warm
    # starts from it and keeps every weight.
    source = ke.DNNLinearCombinedRegressor(
        linear_feature_columns=[AGE],
        dnn_feature_columns=[CITY],
        dnn_hidden_units=[3],
        model_dir=str(tmp_path / "source"),
        linear_optimizer="SGD",
        dnn_optimizer="SGD",
    )
    source.train(_input_fn, max_steps=1)
    with ke.install(), tf.Graph().as_default():
        warm = ke.DNNLinearCombinedRegressor(
            linear_feature_columns=[AGE],
            dnn_feature_columns=[CITY],
            dnn_hidden_units=[3],
            model_dir=str(tmp_path / "warm"),
            dnn_optimizer=tf.keras.optimizers.legacy.SGD(learning_rate=0.0),
            linear_optimizer=tf.keras.optimizers.legacy.SGD(learning_rate=0.0),
            warm_start_from=source.model_dir,
        )
    warm.train(_input_fn, max_steps=1)
    names = [n for n in warm.get_variable_names() if n.startswith(("dnn/", "linear/"))]
    assert len(names) == 7
    for name in names:
        np.testing.assert_allclose(
            warm.get_variable_value(name), source.get_variable_value(name), err_msg=name
        )


@pytest.mark.parametrize(
    "make",
    [
        lambda d: ke.DNNClassifier([2], [AGE], model_dir=d),
        lambda d: ke.Estimator(lambda features, labels, mode: None, model_dir=d),
    ],
    ids=["DNNClassifier", "Estimator"],
)
def test_an_estimator_can_be_made_in_a_graph_context(make, tmp_path):
    with tf.Graph().as_default():
        estimator = make(str(tmp_path))
    assert estimator.model_dir == str(tmp_path)


def _regressor(model_dir):
    return ke.DNNLinearCombinedRegressor(
        linear_feature_columns=[AGE],
        dnn_feature_columns=[CITY],
        dnn_hidden_units=[3],
        model_dir=model_dir,
        config=ke.RunConfig(tf_random_seed=7),
    )


def _run_all(estimator, export_dir):
    estimator.train(_input_fn, steps=3)
    metrics = estimator.evaluate(_input_fn, steps=1)
    predictions = [
        p["predictions"]
        for p in estimator.predict(lambda: tf.data.Dataset.from_tensors(_input_fn()[0]))
    ]
    receiver = ke.export.build_raw_serving_input_receiver_fn(
        {"age": tf.constant([[1.0]]), "city": tf.constant([["Palo Alto"]])}
    )
    exported = estimator.export_saved_model(export_dir, receiver)
    return metrics, predictions, exported


def test_train_evaluate_predict_and_export_run_inside_a_graph_context(tmp_path):
    # tf.estimator 2.15 built graphs of its own, so these calls ran inside the
    # program's `with tf.Graph().as_default():` as they ran outside it. They
    # failed inside TensorFlow ("AttributeError: 'SymbolicTensor' object has
    # no attribute 'numpy'").
    outside = _run_all(_regressor(str(tmp_path / "outside")), str(tmp_path / "e1"))
    with tf.Graph().as_default() as graph:
        inside = _run_all(_regressor(str(tmp_path / "inside")), str(tmp_path / "e2"))
        # The program's graph context is as it was.
        assert tf.compat.v1.get_default_graph() is graph
        assert not tf.executing_eagerly()
    assert tf.executing_eagerly()
    assert inside[0] == pytest.approx(outside[0])
    np.testing.assert_allclose(inside[1], outside[1])
    assert tf.io.gfile.exists(inside[2])
