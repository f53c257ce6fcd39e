"""model_to_estimator against tf.estimator 2.15's own figures.

The models are built with constant initializers so that Keras 3 starts from
the weights tf.keras 2.15 started from; the expected values were recorded by
tests/fixtures/make_tf215_model_to_estimator_fixture.py (keep the models and
data in sync with it).
"""

import json
import os
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

FIXTURE = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "tf215_model_to_estimator.json").read_text()
)


def _fit_data():
    rng = np.random.RandomState(0)
    x = rng.normal(size=(64, 4)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], "float32") + 0.1).astype("float32")
    return x, y


def test_a_fitted_model_brings_its_weights_and_trains_with_a_new_optimizer(tmp_path):
    # 2.15 warm-started the Estimator from the model's weights; its optimizer
    # was new (no slots, counting from global step 0), whatever fit() left.
    x, y = _fit_data()
    inputs = keras.Input((4,), name="x")
    hidden = keras.layers.Dense(
        3, name="hidden", kernel_initializer=keras.initializers.Constant(0.1)
    )(inputs)
    outputs = keras.layers.Dense(
        1, name="out", kernel_initializer=keras.initializers.Constant(0.2)
    )(hidden)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    est = ke.model_to_estimator(model, model_dir=str(tmp_path), checkpoint_format="saver")

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(16)

    est.train(input_fn, steps=4)
    expected = FIXTURE["fit_then_convert"]
    for name in ("hidden/kernel", "hidden/bias", "out/kernel", "out/bias"):
        np.testing.assert_allclose(
            est.get_variable_value(name).ravel(), expected[name], atol=2e-5, err_msg=name
        )
    np.testing.assert_allclose(
        est.get_variable_value("adam/out_kernel_momentum").ravel(),
        expected["out/kernel/m"],
        atol=2e-5,
    )
    assert int(est.get_variable_value("global_step")) == expected["global_step"][0] == 4
    assert int(est.get_variable_value("adam/iteration")) == 4


def test_non_trainable_weights_are_carried(tmp_path):
    # Not as 2.15, which warm-started trainable variables only: its first
    # evaluation of this fitted model gave 10.298 where Keras gave 10.245
    # (moving mean and variance re-initialized). docs/keras.md says so.
    x, y = _fit_data()
    inputs = keras.Input((4,), name="x")
    net = keras.layers.Dense(3, kernel_initializer=keras.initializers.Constant(0.1))(inputs)
    net = keras.layers.BatchNormalization(name="bn")(net)
    model = keras.Model(inputs, keras.layers.Dense(1)(net))
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    expected = model.evaluate(x, y, batch_size=16, verbose=0)
    est = ke.model_to_estimator(model, model_dir=str(tmp_path))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(16)

    np.testing.assert_allclose(est.evaluate(input_fn)["loss"], expected, rtol=1e-6)


def _weighted_data():
    x = np.float32([[1.0, 2.0], [0.5, -1.0], [-1.5, 0.3], [2.0, 1.0]])
    y = np.float32([[1.0], [0.0], [-1.0], [2.0]])
    w = np.float32([0.0, 0.4, 1.0, 2.0])
    return x, y, w


def test_sample_weights_weight_the_loss_in_evaluation_and_training(tmp_path):
    # 2.15's convention: features {'features': x, 'sample_weights': w}.
    x, y, w = _weighted_data()
    expected = FIXTURE["sample_weights"]
    inputs = keras.Input((2,), name="x")
    outputs = keras.layers.Dense(
        1, name="out", kernel_initializer=keras.initializers.Constant(0.5)
    )(inputs)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    est = ke.model_to_estimator(model, model_dir=str(tmp_path / "one"))

    def input_fn():
        features = {"features": x, "sample_weights": w}
        return tf.data.Dataset.from_tensors((features, y)).repeat()

    loss = est.evaluate(input_fn, steps=1)["loss"]
    np.testing.assert_allclose(loss, expected["one_output_eval_loss"], rtol=1e-6)  # 0.17125
    est.train(input_fn, steps=3)
    for name in ("out/kernel", "out/bias"):
        np.testing.assert_allclose(
            est.get_variable_value(name).ravel(),
            expected["one_output_trained"][name],
            rtol=1e-5,
            err_msg=name,
        )
    np.testing.assert_allclose(
        est.evaluate(input_fn, steps=1)["loss"],
        expected["one_output_eval_loss_after"],
        rtol=1e-5,
    )


def test_sample_weights_of_two_outputs(tmp_path):
    x, y, w = _weighted_data()
    inputs = keras.Input((2,), name="x")
    first = keras.layers.Dense(1, name="o1", kernel_initializer=keras.initializers.Constant(0.5))
    second = keras.layers.Dense(
        1, name="o2", kernel_initializer=keras.initializers.Constant(-0.25)
    )
    model = keras.Model(inputs, [first(inputs), second(inputs)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mae")
    est = ke.model_to_estimator(model, model_dir=str(tmp_path))
    other = np.float32([1.0, 1.0, 0.0, 0.5])

    def input_fn():
        features = {"features": x, "sample_weights": (w, other)}
        return tf.data.Dataset.from_tensors((features, (y, y)))

    np.testing.assert_allclose(
        est.evaluate(input_fn, steps=1)["loss"],
        FIXTURE["sample_weights"]["two_outputs_eval_loss"],  # 1.1875
        rtol=1e-6,
    )


def _multi_output_model():
    input_a = keras.Input((3,), name="input_a")
    input_b = keras.Input((3,), name="input_b")
    dense = keras.layers.Dense(
        4, name="dense_1", kernel_initializer=keras.initializers.Constant(0.3)
    )
    merged = keras.layers.concatenate([dense(input_a), dense(input_b)], name="merge")
    out_c = keras.layers.Dense(
        3,
        activation="softmax",
        name="dense_2",
        kernel_initializer=keras.initializers.Constant(
            [[0.1, -0.2, 0.3]] * 4 + [[-0.1, 0.2, 0.05]] * 4
        ),
    )(merged)
    out_d = keras.layers.Dense(
        2,
        activation="softmax",
        name="dense_3",
        kernel_initializer=keras.initializers.Constant([[0.2, -0.1]] * 4 + [[-0.3, 0.1]] * 4),
    )(merged)
    model = keras.Model([input_a, input_b], [out_c, out_d])
    model.compile(
        loss="categorical_crossentropy",
        optimizer="rmsprop",
        metrics={"dense_2": "categorical_accuracy", "dense_3": "categorical_accuracy"},
    )
    return model


def _multi_output_input_fn():
    rng = np.random.RandomState(1)
    a = rng.normal(size=(12, 3)).astype("float32")
    b = rng.normal(size=(12, 3)).astype("float32")
    c = np.eye(3, dtype="float32")[rng.randint(0, 3, size=12)]
    d = np.eye(2, dtype="float32")[rng.randint(0, 2, size=12)]
    return lambda: tf.data.Dataset.from_tensor_slices(((a, b), (c, d))).batch(12)


def test_a_metric_per_output_is_reported_per_output(tmp_path):
    # The same metric on two outputs: 2.15's keys and values, no per-output losses.
    expected = FIXTURE["multi_output_metrics"]
    est = ke.model_to_estimator(_multi_output_model(), model_dir=str(tmp_path / "a"))
    results = est.evaluate(_multi_output_input_fn())
    assert sorted(results) == sorted(expected["results"])
    for key, value in expected["results"].items():
        np.testing.assert_allclose(results[key], value, rtol=1e-6, err_msg=key)
    renamed = ke.model_to_estimator(
        _multi_output_model(),
        model_dir=str(tmp_path / "b"),
        metric_names_map={
            "dense_2_categorical_accuracy": "acc_1",
            "dense_3_categorical_accuracy": "acc_2",
        },
    )
    results = renamed.evaluate(_multi_output_input_fn())
    assert sorted(results) == sorted(expected["renamed_results"])
    for key, value in expected["renamed_results"].items():
        np.testing.assert_allclose(results[key], value, rtol=1e-6, err_msg=key)


def _functional_model(metrics=("binary_accuracy",)):
    inputs = keras.Input((10,), name="input_layer")
    hidden = keras.layers.Dense(16, activation="relu", name="hidden")(inputs)
    outputs = keras.layers.Dense(2, activation="softmax", name="dense_1")(hidden)
    model = keras.Model(inputs, outputs)
    model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=list(metrics))
    return model


def _xy():
    rng = np.random.RandomState(3)
    x = rng.normal(size=(8, 10)).astype("float32")
    return x, np.eye(2, dtype="float32")[rng.randint(0, 2, size=8)]


def test_feature_and_label_keys_missing_raise_2_15s_key_error(tmp_path):
    # 2.15 raised keras_lib.FormattedKeyError, a KeyError, naming the keys.
    # (A one-key dict goes to a single-input model whatever its key: see
    # test_model_to_estimator.py::test_single_input_takes_a_one_key_dict_whatever_its_key.)
    x, y = _xy()
    est = ke.model_to_estimator(_functional_model(), model_dir=str(tmp_path))
    pattern = r"{} keys:(\s|.)*{}(\s|.)*Missed keys:(\s|.)*{}"
    features = {"invalid_input_name": x, "other": x}
    with pytest.raises(
        KeyError, match=pattern.format("features", "invalid_input_name", "input_layer")
    ):
        est.train(lambda: (features, y), steps=1)
    with pytest.raises(
        KeyError, match=pattern.format("labels", "invalid_output_name", "dense_1")
    ):
        est.train(lambda: ({"input_layer": x}, {"invalid_output_name": y}), steps=1)


def test_export_outputs_naming_no_output_raise_2_15s_key_error(tmp_path):
    with pytest.raises(KeyError, match=r"Missed keys"):
        ke.model_to_estimator(
            _functional_model(),
            model_dir=str(tmp_path),
            export_outputs={"p": ke.export.ClassificationOutput},
        )


def test_model_arguments_are_refused_with_2_15s_messages(tmp_path):
    with pytest.raises(ValueError, match=r"^Either `keras_model` or `keras_model_path`"):
        ke.model_to_estimator()
    uncompiled = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    with pytest.raises(ValueError, match=r"not both"):
        ke.model_to_estimator(keras_model=uncompiled, keras_model_path=str(tmp_path))
    with pytest.raises(ValueError, match=r"^The given keras model has not been compiled yet"):
        ke.model_to_estimator(keras_model=uncompiled)
    with pytest.raises(ValueError, match=r'^Checkpoint format must be one of "checkpoint" or'):
        ke.model_to_estimator(_functional_model(), checkpoint_format="h5")
    # 2.15 took None for its default, 'checkpoint'.
    ke.model_to_estimator(
        _functional_model(), model_dir=str(tmp_path / "none"), checkpoint_format=None
    )


def test_metric_names_map_is_checked_when_the_metrics_are_built(tmp_path):
    x, y = _xy()

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(8)

    # Accepted when made, refused by evaluate with 2.15's messages.
    est = ke.model_to_estimator(
        _functional_model(), model_dir=str(tmp_path / "a"), metric_names_map={"binary_acc": ""}
    )
    with pytest.raises(ValueError, match=r"^Invalid `metric_names_map`.*do not exist"):
        est.evaluate(input_fn)
    est = ke.model_to_estimator(
        _functional_model(),
        model_dir=str(tmp_path / "b"),
        metric_names_map={"binary_accuracy": "acc", "abcde": ""},
    )
    with pytest.raises(ValueError, match=r"^Invalid `metric_names_map`.*unexpected keys"):
        est.evaluate(input_fn)


def test_lambda_layers_keep_their_functions(tmp_path):
    # A TensorFlow op and a Python lambda in Lambda layers, which Keras 3's
    # config round trip cannot restore; 2.15 evaluated this model to 4.84.
    input_a = keras.Input((4,), name="a")
    input_m = keras.Input((4,), dtype="string", name="m")
    dense = keras.layers.Dense(4, kernel_initializer=keras.initializers.Constant(0.2))(input_a)
    numbers = keras.layers.Lambda(tf.strings.to_number, output_shape=(4,))(input_m)
    product = keras.layers.Lambda(lambda k: k[0] * k[1], output_shape=(4,))([numbers, dense])
    outputs = keras.layers.Dense(1, kernel_initializer=keras.initializers.Constant(0.5))(product)
    model = keras.Model([input_a, input_m], outputs)
    model.compile("sgd", "mse")
    est = ke.model_to_estimator(model, model_dir=str(tmp_path))
    features = {"a": np.ones((6, 4), "float32"), "m": np.full((6, 4), "2.0")}

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((features, np.ones((6, 1), "float32"))).batch(6)

    np.testing.assert_allclose(est.evaluate(input_fn, steps=1)["loss"], 4.84, rtol=1e-6)
    est.train(input_fn, steps=1)


@keras.saving.register_keras_serializable(package="keras_estimator_tests")
class SimpleSubclassedModel(keras.Model):
    """2.15's keras_test.py simple_subclassed_model."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense1 = keras.layers.Dense(16, activation="relu")
        self.dense2 = keras.layers.Dense(2, activation="softmax")

    def call(self, inputs):
        return self.dense2(self.dense1(inputs))


def test_a_subclassed_model_never_called_is_built_on_the_first_input(tmp_path):
    # 2.15 took a compiled subclassed model that was never called and built
    # it on the Estimator's input; it was refused as not built.
    x, y = _xy()
    model = SimpleSubclassedModel()
    model.compile(optimizer=keras.optimizers.RMSprop(1e-3), loss="categorical_crossentropy")
    assert not model.built
    est = ke.model_to_estimator(model, model_dir=str(tmp_path))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(4).repeat()

    est.train(input_fn, steps=3)
    assert int(est.get_variable_value("global_step")) == 3
    assert est.get_variable_value("dense/kernel").shape == (10, 16)
    assert np.isfinite(est.evaluate(input_fn, steps=2)["loss"])
    predictions = next(est.predict(lambda: tf.data.Dataset.from_tensor_slices(x).batch(4)))
    assert predictions["output_1"].shape == (2,)
    # Predicting first builds the model too.
    fresh = ke.model_to_estimator(_compiled_simple_model(), model_dir=str(tmp_path / "p"))
    first = next(fresh.predict(lambda: tf.data.Dataset.from_tensor_slices(x).batch(4)))
    assert first["output_1"].shape == (2,)


def _compiled_simple_model():
    model = SimpleSubclassedModel()
    model.compile(optimizer="sgd", loss="categorical_crossentropy")
    return model


def test_an_export_before_training_holds_the_models_weights(tmp_path):
    # 2.15 wrote the model's weights to <model_dir>/keras/keras_model.ckpt and
    # warm-started from it, so an export before any training served them.
    x, _ = _xy()
    model = _functional_model()
    model.get_layer("hidden").bias.assign(np.arange(16, dtype="float32") / 10)
    est = ke.model_to_estimator(model, model_dir=str(tmp_path / "model"))
    assert (tmp_path / "model" / "keras" / "keras_model.ckpt.index").exists()
    receiver = ke.export.build_raw_serving_input_receiver_fn(
        {"input_layer": tf.TensorSpec([None, 10], tf.float32)}
    )
    exported = est.export_saved_model(str(tmp_path / "export"), receiver)
    serve = tf.saved_model.load(os.fsdecode(exported)).signatures["serving_default"]
    served = serve(input_layer=tf.constant(x))["dense_1"].numpy()
    np.testing.assert_allclose(served, model.predict(x, verbose=0), rtol=1e-6)


def test_declared_input_shapes_hold(tmp_path):
    # Not as 2.15 (docs/keras.md), which rebuilt the copy on the features: a
    # feature of another shape than its declared Input is refused.
    inputs = keras.Input((4,), name="x")
    model = keras.Model(inputs, keras.layers.Dense(1)(inputs))
    model.compile("sgd", "mse")
    est = ke.model_to_estimator(model, model_dir=str(tmp_path))

    def input_fn():
        features = {"x": np.float32([1.0, 2.0, 3.0])}
        return tf.data.Dataset.from_tensor_slices((features, np.float32([1.0, 0.0, 1.0]))).batch(3)

    with pytest.raises(ValueError, match=r"Invalid input shape"):
        est.train(input_fn, steps=1)
