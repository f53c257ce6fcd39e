"""DNN estimators: arguments, signatures, and training under a strategy."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

X = np.random.RandomState(1).normal(size=(32, 3)).astype(np.float32)
Y = (X[:, 0] > 0).astype(np.int64)
COLUMNS = [tf.feature_column.numeric_column("x", shape=[3])]


def train_input():
    return tf.data.Dataset.from_tensors(({"x": X}, Y)).repeat()


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(hidden_units=[]), ValueError, "non-empty list of positive integers"),
        (dict(hidden_units=[4, 0]), ValueError, "positive integers"),
        (dict(hidden_units=[4], feature_columns=[]), ValueError, "feature_columns is empty"),
        (dict(hidden_units=[4], optimizer="Adadelta"), ValueError, "^Unsupported optimizer name:"),
        (
            dict(hidden_units=[4], optimizer=object()),
            ValueError,
            "^The given object is not a tf.keras.optimizers.Optimizer instance",
        ),
        (dict(hidden_units=[4], n_classes=1), ValueError, "n_classes"),
        (dict(hidden_units=[4], dropout=1.5), ValueError, "dropout"),
    ],
)
def test_bad_arguments_are_refused_naming_them(kwargs, error, match, tmp_path):
    kwargs = {"feature_columns": COLUMNS, **kwargs}
    with pytest.raises(error, match=match):
        ke.DNNClassifier(model_dir=str(tmp_path), **kwargs)


def test_classifier_signatures_are_2_15s(tmp_path):
    est = ke.DNNClassifier([4], COLUMNS, model_dir=str(tmp_path / "m"))
    est.train(train_input, steps=3)
    receiver = ke.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec(COLUMNS)
    )
    export_dir = est.export_saved_model(str(tmp_path / "export"), receiver)
    loaded = tf.saved_model.load(export_dir)
    assert sorted(loaded.signatures) == [
        "classification", "predict", "regression", "serving_default",
    ]
    example = tf.train.Example(
        features=tf.train.Features(
            feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=X[0]))}
        )
    ).SerializeToString()
    outputs = loaded.signatures["predict"](examples=tf.constant([example]))
    assert "logistic" in outputs and "class_ids" in outputs
    scores = loaded.signatures["classification"](inputs=tf.constant([example]))["scores"]
    np.testing.assert_allclose(
        scores.numpy()[0, 1], outputs["logistic"].numpy()[0, 0], rtol=1e-6
    )


def test_keras_optimizer_settings_are_carried_over(tmp_path):
    import keras

    est = ke.DNNRegressor(
        [3], COLUMNS, model_dir=str(tmp_path), optimizer=keras.optimizers.Adam(0.02)
    )
    est.train(lambda: tf.data.Dataset.from_tensors(({"x": X}, X[:, :1])).repeat(), steps=2)
    assert est.get_variable_value("training/Adam/learning_rate") == pytest.approx(0.02)


def test_two_replicas_train_as_one_device(tmp_path):
    """Gradients are summed over replicas of the scaled loss: the same update."""

    def estimator(name, strategy):
        config = ke.RunConfig(tf_random_seed=5, train_distribute=strategy)
        return ke.DNNClassifier([4], COLUMNS, model_dir=str(tmp_path / name), config=config,
                                optimizer="SGD")

    one = estimator("one", None)
    two = estimator("two", tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
    one.train(train_input, steps=4)
    two.train(train_input, steps=4)
    for name in ("dnn/hiddenlayer_0/kernel", "dnn/logits/kernel", "dnn/logits/bias"):
        np.testing.assert_allclose(
            two.get_variable_value(name), one.get_variable_value(name), rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize(
    "make",
    [
        lambda cols, d: ke.DNNClassifier([4], cols, n_classes=3, model_dir=d),
        lambda cols, d: ke.LinearRegressor(cols, model_dir=d),
        lambda cols, d: ke.DNNLinearCombinedClassifier(
            d, linear_feature_columns=cols, dnn_feature_columns=cols, dnn_hidden_units=[2]
        ),
    ],
)
def test_a_feature_the_columns_need_and_input_fn_lacks_is_named(make, tmp_path):
    columns = [tf.feature_column.numeric_column("x"), tf.feature_column.numeric_column("z")]
    est = make(columns, str(tmp_path))

    def input_fn():
        features = {"x": np.zeros([4], np.float32), "y": np.zeros([4], np.float32)}
        return tf.data.Dataset.from_tensors((features, np.array([0, 1, 2, 1]))).repeat()

    with pytest.raises(ValueError, match=r"read features \['z'\].*it gave \['x', 'y'\]"):
        est.train(input_fn, steps=1)
