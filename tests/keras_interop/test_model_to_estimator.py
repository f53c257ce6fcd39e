"""model_to_estimator: a compiled Keras model trained, evaluated, predicted and
given back, with `Estimator.train` equal to `Model.fit` step for step."""

import os
import tempfile

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from tests._models import LossRecorder, make_data

X, Y = make_data(num_examples=48)


def _input_fn(batch_size=16, features_key="x"):
    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({features_key: X}, Y))
        return data.batch(batch_size).repeat()

    return input_fn


def _functional(hidden=(8,), seed=1, optimizer=None, metrics=("accuracy",)):
    keras.utils.set_random_seed(seed)
    inputs = keras.Input((4,), name="x")
    net = inputs
    for units in hidden:
        net = keras.layers.Dense(units, activation="relu")(net)
    outputs = keras.layers.Dense(3, name="logits")(net)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=optimizer or keras.optimizers.Adam(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=list(metrics),
        jit_compile=False,
    )
    return model


def _sequential(hidden=(8,), seed=1, optimizer=None):
    keras.utils.set_random_seed(seed)
    layers = [keras.Input((4,), name="x")]
    layers += [keras.layers.Dense(units, activation="tanh") for units in hidden]
    layers.append(keras.layers.Dense(3))
    model = keras.Sequential(layers)
    model.compile(
        optimizer=optimizer or keras.optimizers.SGD(0.1),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        jit_compile=False,
    )
    return model


_OPTIMIZERS = {
    "adam": lambda: keras.optimizers.Adam(0.01),
    "sgd": lambda: keras.optimizers.SGD(0.1, momentum=0.5),
    "rmsprop": lambda: keras.optimizers.RMSprop(0.01),
}


@given(
    kind=st.sampled_from(["sequential", "functional"]),
    hidden=st.lists(st.integers(1, 8), min_size=0, max_size=2),
    optimizer=st.sampled_from(sorted(_OPTIMIZERS)),
    batch_size=st.sampled_from([5, 8, 16]),
    seed=st.integers(0, 1000),
    steps=st.integers(1, 12),
)
def test_estimator_train_equals_model_fit(kind, hidden, optimizer, batch_size, seed, steps):
    build = _sequential if kind == "sequential" else _functional
    model = build(tuple(hidden), seed, _OPTIMIZERS[optimizer]())
    # A fresh model_dir per example (tmp_path is shared by all examples).
    estimator = ke.model_to_estimator(model, model_dir=tempfile.mkdtemp())
    ours = LossRecorder()
    estimator.train(_input_fn(batch_size), steps=steps, callbacks=[ours])

    theirs = LossRecorder()
    model.fit(
        _input_fn(batch_size)(),
        steps_per_epoch=steps,
        epochs=1,
        verbose=0,
        shuffle=False,
        callbacks=[theirs],
    )
    assert ours.losses == theirs.losses
    trained = ke.keras_model_from_estimator(estimator)
    for mine, expected in zip(trained.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(mine, expected)
    for mine, expected in zip(
        trained.optimizer.variables, model.optimizer.variables, strict=True
    ):
        np.testing.assert_array_equal(mine.numpy(), expected.numpy())


def test_user_model_is_left_untouched(tmp_path):
    model = _functional()
    before = [w.copy() for w in model.get_weights()]
    estimator = ke.model_to_estimator(model, model_dir=str(tmp_path))
    estimator.train(_input_fn(), steps=5)
    for now, then in zip(model.get_weights(), before, strict=True):
        np.testing.assert_array_equal(now, then)
    assert int(estimator.get_variable_value("global_step")) == 5
    assert int(estimator.get_variable_value("adam/iteration")) == 5


def test_current_weights_are_carried_and_the_optimizer_starts_afresh(tmp_path):
    # As in tf.estimator 2.15: the fitted weights, a new optimizer (no slots,
    # step 0); test_tf215_model_to_estimator.py has 2.15's figures.
    model = _functional()
    model.fit(_input_fn()(), steps_per_epoch=3, epochs=1, verbose=0)
    estimator = ke.model_to_estimator(model, model_dir=str(tmp_path))
    ours = LossRecorder()
    estimator.train(_input_fn(), steps=4, callbacks=[ours])
    fresh = _functional()
    fresh.set_weights(model.get_weights())
    theirs = LossRecorder()
    fresh.fit(_input_fn()(), steps_per_epoch=4, epochs=1, verbose=0, callbacks=[theirs])
    assert ours.losses == theirs.losses
    assert int(estimator.get_variable_value("adam/iteration")) == 4


def test_evaluate_and_predict_match_keras(tmp_path):
    model = _functional(metrics=("accuracy", "sparse_categorical_crossentropy"))
    estimator = ke.model_to_estimator(model, model_dir=str(tmp_path))
    estimator.train(_input_fn(), steps=6)
    model.fit(_input_fn()(), steps_per_epoch=6, epochs=1, verbose=0)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16)

    ours = estimator.evaluate(eval_input_fn)
    theirs = model.evaluate(eval_input_fn(), return_dict=True, verbose=0)
    assert ours["global_step"] == 6
    for name in ("accuracy", "sparse_categorical_crossentropy", "loss"):
        assert ours[name] == pytest.approx(theirs[name], rel=1e-6), name

    predictions = list(
        estimator.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": X}).batch(7))
    )
    assert set(predictions[0]) == {"logits"}
    np.testing.assert_allclose(
        np.stack([p["logits"] for p in predictions]),
        model.predict(X, verbose=0),
        rtol=1e-6,
        atol=1e-6,
    )


def test_metric_names_map_renames_evaluation_results(tmp_path):
    model = _functional()
    estimator = ke.model_to_estimator(
        model, model_dir=str(tmp_path), metric_names_map={"accuracy": "acc"}
    )
    estimator.train(_input_fn(), steps=2)
    results = estimator.evaluate(_input_fn(), steps=2)
    assert "acc" in results and "accuracy" not in results


def test_metric_names_map_must_cover_compiled_metrics(tmp_path):
    # Checked when training or evaluation builds the metrics, as in 2.15.
    model = _functional(metrics=("accuracy", "mae"))
    estimator = ke.model_to_estimator(
        model, model_dir=str(tmp_path), metric_names_map={"accuracy": "acc"}
    )
    with pytest.raises(ValueError, match=r"Invalid `metric_names_map`.*\['mae'\]"):
        estimator.train(_input_fn(), steps=1)


def _two_headed(seed=3):
    keras.utils.set_random_seed(seed)
    a = keras.Input((3,), name="a")
    b = keras.Input((2,), name="b")
    joined = keras.layers.Concatenate()([a, b])
    hidden = keras.layers.Dense(6, activation="relu")(joined)
    outputs = {
        "score": keras.layers.Dense(1, name="score")(hidden),
        "label": keras.layers.Dense(2, name="label")(hidden),
    }
    model = keras.Model({"a": a, "b": b}, outputs)
    model.compile(
        optimizer=keras.optimizers.Adam(0.02),
        loss={
            "score": "mse",
            "label": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        },
        loss_weights={"score": 0.5, "label": 1.0},
        metrics={"label": ["accuracy"]},
        jit_compile=False,
    )
    return model


def _two_headed_data(n=32):
    rng = np.random.default_rng(4)
    features = {
        "a": rng.normal(size=(n, 3)).astype("float32"),
        "b": rng.normal(size=(n, 2)).astype("float32"),
        "unused": np.zeros((n, 1), "float32"),
    }
    labels = {
        "score": rng.normal(size=(n, 1)).astype("float32"),
        "label": rng.integers(0, 2, size=(n,)).astype("int64"),
    }
    return features, labels


def test_multi_input_multi_output_model_fed_by_dicts(tmp_path):
    model = _two_headed()
    features, labels = _two_headed_data()

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(8).repeat()

    estimator = ke.model_to_estimator(model, model_dir=str(tmp_path))
    ours = LossRecorder()
    estimator.train(input_fn, steps=6, callbacks=[ours])
    keras_features = {k: v for k, v in features.items() if k != "unused"}
    theirs = LossRecorder()
    model.fit(
        tf.data.Dataset.from_tensor_slices((keras_features, labels)).batch(8).repeat(),
        steps_per_epoch=6,
        epochs=1,
        verbose=0,
        callbacks=[theirs],
    )
    assert ours.losses == theirs.losses
    results = estimator.evaluate(input_fn, steps=4)
    keras_results = model.evaluate(
        tf.data.Dataset.from_tensor_slices((keras_features, labels)).batch(8),
        return_dict=True,
        verbose=0,
    )
    # As in tf.estimator 2.15: the compiled metrics, loss and global_step;
    # not Keras' per-output losses.
    per_output_losses = {"score_loss", "label_loss"}
    assert per_output_losses <= set(keras_results)
    assert set(results) == set(keras_results) - per_output_losses | {"global_step"}
    prediction = next(
        estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(features).batch(4))
    )
    assert set(prediction) == {"score", "label"}


def test_single_input_takes_a_one_key_dict_whatever_its_key(tmp_path):
    # Not as 2.15, which raised its KeyError here: Keras 3 names inputs
    # otherwise than tf.keras 2 did ('input_layer' where 2.15 had 'input_1'),
    # so a 2.15 program's one key is taken whatever its name (docs/keras.md).
    estimator = ke.model_to_estimator(_functional(), model_dir=str(tmp_path))
    estimator.train(_input_fn(features_key="pixels"), steps=2)
    assert estimator.get_variable_value("global_step") == 2


class _Scale(keras.layers.Layer):
    """A custom layer, for loading a saved model that needs custom_objects."""

    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, inputs):
        return inputs * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


def _custom_layer_model():
    keras.utils.set_random_seed(5)
    inputs = keras.Input((4,), name="x")
    outputs = keras.layers.Dense(3)(_Scale(name="scale")(inputs))
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer="sgd",
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=False,
    )
    return model


@pytest.mark.parametrize("suffix", [".keras", ".h5"])
def test_keras_model_path_loads_saved_models(suffix, tmp_path):
    model = _functional()
    path = str(tmp_path / f"model{suffix}")
    model.save(path)
    estimator = ke.model_to_estimator(keras_model_path=path, model_dir=str(tmp_path / "dir"))
    first = next(
        estimator.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": X[:1]}).batch(1))
    )
    np.testing.assert_allclose(first["logits"], model.predict(X[:1], verbose=0)[0], rtol=1e-6)


def test_missing_custom_object_is_named(tmp_path):
    path = str(tmp_path / "custom.keras")
    _custom_layer_model().save(path)
    with pytest.raises(ValueError, match=r"_Scale.*custom_objects"):
        ke.model_to_estimator(keras_model_path=path, model_dir=str(tmp_path / "a"))
    estimator = ke.model_to_estimator(
        keras_model_path=path,
        custom_objects={"_Scale": _Scale},
        model_dir=str(tmp_path / "b"),
    )
    estimator.train(_input_fn(), steps=1)


def test_round_trip_to_keras_files_keeps_predictions(tmp_path):
    estimator = ke.model_to_estimator(_sequential(), model_dir=str(tmp_path / "dir"))
    estimator.train(_input_fn(), steps=7)
    predicted = np.stack(
        [
            next(iter(p.values()))
            for p in estimator.predict(
                lambda: tf.data.Dataset.from_tensor_slices({"x": X}).batch(16)
            )
        ]
    )
    back = ke.keras_model_from_estimator(estimator)
    for suffix in (".keras", ".h5"):
        path = str(tmp_path / f"trained{suffix}")
        back.save(path)
        reloaded = keras.models.load_model(path)
        np.testing.assert_allclose(reloaded.predict(X, verbose=0), predicted, rtol=1e-6, atol=1e-6)


def test_weights_of_an_earlier_checkpoint(tmp_path):
    config = ke.RunConfig(save_checkpoints_steps=2, keep_checkpoint_max=10)
    estimator = ke.model_to_estimator(_functional(), model_dir=str(tmp_path), config=config)
    estimator.train(_input_fn(), steps=4)
    early = ke.keras_model_from_estimator(
        estimator, checkpoint_path=os.path.join(str(tmp_path), "model.ckpt-2")
    )
    late = ke.keras_model_from_estimator(estimator)
    stored = tf.train.load_checkpoint(os.path.join(str(tmp_path), "model.ckpt-2"))
    hidden_kernel = early.weights[0].path  # e.g. dense/kernel
    assert hidden_kernel in estimator.get_variable_names()
    np.testing.assert_array_equal(early.get_weights()[0], stored.get_tensor(hidden_kernel))
    assert not np.array_equal(early.get_weights()[0], late.get_weights()[0])


def test_training_resumes_from_model_dir_in_a_new_estimator(tmp_path):
    model = _functional()
    first = ke.model_to_estimator(model, model_dir=str(tmp_path))
    first.train(_input_fn(), steps=3)
    second = ke.model_to_estimator(model, model_dir=str(tmp_path))
    second.train(_input_fn(), steps=2)
    assert int(second.get_variable_value("global_step")) == 5
    assert int(second.get_variable_value("adam/iteration")) == 5


def test_subclassed_model(tmp_path):
    class TwoLayer(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.hidden = keras.layers.Dense(5, activation="relu")
            self.out = keras.layers.Dense(3)

        def call(self, inputs):
            return self.out(self.hidden(inputs))

    keras.utils.set_random_seed(2)
    model = TwoLayer()
    model(X[:1])
    model.compile(
        optimizer=keras.optimizers.Adam(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=False,
    )
    estimator = ke.model_to_estimator(model, model_dir=str(tmp_path))
    ours = LossRecorder()
    estimator.train(_input_fn(), steps=4, callbacks=[ours])
    theirs = LossRecorder()
    # Keras gives a subclassed model its input as is: a tensor, not a dict.
    plain = tf.data.Dataset.from_tensor_slices((X, Y)).batch(16).repeat()
    model.fit(plain, steps_per_epoch=4, epochs=1, verbose=0, callbacks=[theirs])
    assert ours.losses == theirs.losses


def test_uncompiled_model_is_refused(tmp_path):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    with pytest.raises(ValueError, match=r"has not been compiled yet.*model.compile"):
        ke.model_to_estimator(model, model_dir=str(tmp_path))


@pytest.mark.parametrize(
    "kwargs, error, pattern",
    [
        ({}, ValueError, r"Either `keras_model` or `keras_model_path` needs"),
        ({"keras_model_path": "/nonexistent/model.keras"}, ValueError, r"does not exist"),
        ({"keras_model": "model"}, TypeError, r"keras_model must be a keras.Model, got str"),
    ],
)
def test_bad_model_arguments(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        ke.model_to_estimator(**kwargs)


def test_unknown_checkpoint_format(tmp_path):
    with pytest.raises(ValueError, match=r"Checkpoint format must be one of .* Got 'h5'"):
        ke.model_to_estimator(_functional(), model_dir=str(tmp_path), checkpoint_format="h5")


def test_export_outputs_must_name_model_outputs(tmp_path):
    with pytest.raises(ValueError, match=r"\['nope'\].*outputs are \['logits'\]"):
        ke.model_to_estimator(
            _functional(),
            model_dir=str(tmp_path),
            export_outputs={"nope": ke.export.RegressionOutput},
        )


def test_keras_model_from_a_model_fn_estimator_is_refused(tmp_path):
    from tests._models import mlp_model_fn

    estimator = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path))
    with pytest.raises(TypeError, match=r"made by model_to_estimator"):
        ke.keras_model_from_estimator(estimator)


# ---- model_fn_to_keras: a model_fn as a Keras model on the same model_dir ------
def _mlp_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16).repeat()


def test_model_fn_as_keras_model_shares_model_dir_with_estimator(tmp_path):
    from tests._models import mlp_model_fn

    params = {"hidden": [6]}
    config = ke.RunConfig(tf_random_seed=3, save_checkpoints_steps=4)
    model = ke.model_fn_to_keras(mlp_model_fn, str(tmp_path), config, params)
    assert isinstance(model, keras.Model)

    seen = []
    record = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: seen.append(
            int(tf.compat.v1.train.get_global_step().numpy())
        )
    )
    history = model.fit(_mlp_input_fn(), steps_per_epoch=10, callbacks=[record])
    assert isinstance(history, keras.callbacks.History)
    assert seen[-1] == 10
    assert os.path.exists(os.path.join(str(tmp_path), "model.ckpt-10.index"))
    assert os.path.exists(os.path.join(str(tmp_path), "model.ckpt-8.index"))

    estimator = ke.Estimator(mlp_model_fn, str(tmp_path), config, params)
    assert int(estimator.get_variable_value("global_step")) == 10

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16)

    expected = estimator.evaluate(eval_input_fn)
    assert model.evaluate(eval_input_fn(), return_dict=True) == expected
    assert model.evaluate(eval_input_fn()) == [expected["loss"], expected["accuracy"]]

    features = tf.data.Dataset.from_tensor_slices({"x": X}).batch(10)
    predicted = model.predict(features)
    from_estimator = list(estimator.predict(lambda: features))
    np.testing.assert_array_equal(
        predicted["logits"], np.stack([p["logits"] for p in from_estimator])
    )

    # The Estimator trains on; the Keras model sees its new checkpoint.
    estimator.train(_mlp_input_fn, steps=5)
    later = estimator.evaluate(eval_input_fn)
    assert model.evaluate(eval_input_fn(), return_dict=True) == later
    assert later["global_step"] == 15


def test_model_fn_keras_model_rejects_keras_epoch_arguments(tmp_path):
    from tests._models import mlp_model_fn

    model = ke.model_fn_to_keras(mlp_model_fn, str(tmp_path), params={"hidden": [4]})
    with pytest.raises(ValueError, match=r"steps_per_epoch=N.*epochs=3"):
        model.fit(_mlp_input_fn(), epochs=3, steps_per_epoch=2)


def test_saved_model_export_of_a_keras_estimator(tmp_path):
    model = _two_headed()
    features, labels = _two_headed_data()
    estimator = ke.model_to_estimator(
        model,
        model_dir=str(tmp_path / "dir"),
        export_outputs={"score": ke.export.RegressionOutput},
    )
    estimator.train(
        lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(8).repeat(),
        steps=3,
    )
    receiver_fn = ke.export.build_raw_serving_input_receiver_fn(
        {"a": tf.TensorSpec([None, 3], tf.float32), "b": tf.TensorSpec([None, 2], tf.float32)}
    )
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), receiver_fn)
    loaded = tf.saved_model.load(export_dir.decode())
    # Regression signatures need serialized tf.Example input, as in tf.estimator.
    assert set(loaded.signatures) == {"serving_default"}
    served = loaded.signatures["serving_default"](
        a=tf.constant(features["a"][:4]), b=tf.constant(features["b"][:4])
    )
    predicted = list(
        estimator.predict(
            lambda: tf.data.Dataset.from_tensor_slices(
                {"a": features["a"][:4], "b": features["b"][:4]}
            ).batch(4)
        )
    )
    expected = np.stack([p["score"] for p in predicted])
    np.testing.assert_allclose(served["score"].numpy(), expected, rtol=1e-6)

    parsing_fn = ke.export.build_parsing_serving_input_receiver_fn(
        {
            "a": tf.io.FixedLenFeature([3], tf.float32),
            "b": tf.io.FixedLenFeature([2], tf.float32),
        }
    )
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), parsing_fn)
    loaded = tf.saved_model.load(export_dir.decode())
    assert {"serving_default", "score"} <= set(loaded.signatures)
    examples = [
        tf.train.Example(
            features=tf.train.Features(
                feature={
                    "a": tf.train.Feature(float_list=tf.train.FloatList(value=features["a"][i])),
                    "b": tf.train.Feature(float_list=tf.train.FloatList(value=features["b"][i])),
                }
            )
        ).SerializeToString()
        for i in range(4)
    ]
    regression = loaded.signatures["score"](inputs=tf.constant(examples))
    np.testing.assert_allclose(
        regression["outputs"].numpy().reshape(-1), expected.reshape(-1), rtol=1e-6
    )


def _served(export_dir):
    signature = tf.saved_model.load(export_dir.decode()).signatures["serving_default"]
    return next(iter(signature(x=tf.constant(X)).values())).numpy()


def _predicted(estimator, checkpoint_path=None):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": X}).batch(16)

    outputs = estimator.predict(input_fn, checkpoint_path=checkpoint_path)
    return np.stack([next(iter(p.values())) for p in outputs])


RECEIVER = ke.export.build_raw_serving_input_receiver_fn(
    {"x": tf.TensorSpec([None, 4], tf.float32)}
)


def test_an_export_carries_the_weights_of_the_checkpoint_it_exports(tmp_path):
    config = ke.RunConfig(save_checkpoints_steps=2, keep_checkpoint_max=10)
    model = _functional()
    trained = ke.model_to_estimator(model, model_dir=str(tmp_path), config=config)
    trained.train(_input_fn(), steps=4)
    latest = _predicted(trained)
    # A new Estimator on the model_dir exports what training saved, not the
    # Keras model's initial weights.
    fresh = ke.model_to_estimator(model, model_dir=str(tmp_path), config=config)
    exported = fresh.export_saved_model(str(tmp_path / "fresh"), RECEIVER)
    np.testing.assert_allclose(_served(exported), latest, atol=1e-6)
    # An earlier checkpoint (as BestExporter exports) gives its own weights.
    early_path = os.path.join(str(tmp_path), "model.ckpt-2")
    early = trained.export_saved_model(
        str(tmp_path / "early"), RECEIVER, checkpoint_path=early_path
    )
    np.testing.assert_allclose(
        _served(early), _predicted(trained, early_path), atol=1e-6
    )
    assert not np.allclose(_served(early), latest)


def test_exporting_an_earlier_checkpoint_leaves_training_as_it_was(tmp_path):
    config = ke.RunConfig(save_checkpoints_steps=2, keep_checkpoint_max=10)
    runs = []
    for name, export in (("plain", False), ("exported", True)):
        estimator = ke.model_to_estimator(
            _functional(), model_dir=str(tmp_path / name), config=config
        )
        estimator.train(_input_fn(), steps=4)
        if export:
            estimator.export_saved_model(
                str(tmp_path / "export"),
                RECEIVER,
                checkpoint_path=os.path.join(str(tmp_path / name), "model.ckpt-2"),
            )
        estimator.train(_input_fn(), steps=2)
        runs.append(estimator)
    plain, exported = runs
    # The second model's layers are auto-named one higher (dense_1 for dense):
    # the names pair up in sorted order.
    pairs = zip(
        sorted(plain.get_variable_names()),
        sorted(exported.get_variable_names()),
        strict=True,
    )
    for ours, theirs in pairs:
        np.testing.assert_array_equal(
            exported.get_variable_value(theirs), plain.get_variable_value(ours)
        )
