"""`keras_estimator.keras_model_fn`: the model_fn model_to_estimator runs, public.

An Estimator on it trains exactly as `model_to_estimator`; wrapped (with
`functools.wraps`) it takes hooks and changes to the EstimatorSpec.
"""

import functools
import logging
import tempfile

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from tests._models import LossRecorder

_OPTIMIZERS = {
    "adam": lambda: keras.optimizers.Adam(0.01),
    "sgd": lambda: keras.optimizers.SGD(0.1, momentum=0.5),
    "rmsprop": lambda: keras.optimizers.RMSprop(0.01),
}


def _data(num_examples=40, num_features=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(num_examples, num_features)).astype("float32")
    w = rng.normal(size=(num_features, 3))
    y = np.argmax(x @ w, axis=1).astype("int32")
    return x, y


X, Y = _data()


def _input_fn(x=X, y=Y, batch_size=8, repeat=True):
    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(batch_size)
        return data.repeat() if repeat else data

    return input_fn


def _model(
    kind="functional", hidden=(6,), seed=1, optimizer="adam", metrics=("accuracy",)
):
    keras.utils.set_random_seed(seed)
    inputs = keras.Input((X.shape[1],), name="x")
    if kind == "sequential":
        layers = [inputs]
        layers += [keras.layers.Dense(units, activation="tanh") for units in hidden]
        layers.append(keras.layers.Dense(3))
        model = keras.Sequential(layers)
    else:
        net = inputs
        for units in hidden:
            net = keras.layers.Dense(units, activation="relu")(net)
        model = keras.Model(inputs, keras.layers.Dense(3, name="logits")(net))
    model.compile(
        optimizer=_OPTIMIZERS[optimizer](),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=list(metrics),
        jit_compile=False,
    )
    return model


class _RecordingHook(ke.SessionRunHook):
    """Fetches the loss every step and keeps what it got."""

    def __init__(self, loss):
        self._loss = loss
        self.seen = []
        self.began = False

    def begin(self):
        self.began = True

    def before_run(self, run_context):
        return ke.SessionRunArgs({"loss": self._loss, "step": "global_step"})

    def after_run(self, run_context, run_values):
        self.seen.append((int(run_values.results["step"]), run_values.results["loss"]))


def _values(estimator):
    return {n: estimator.get_variable_value(n) for n in estimator.get_variable_names()}


def _assert_same_values(ours, theirs):
    assert sorted(ours) == sorted(theirs)
    for name in ours:
        assert np.asarray(ours[name]).tobytes() == np.asarray(theirs[name]).tobytes(), (
            name
        )


def _train_both(model, model_fn, steps, batch_size):
    ours, theirs = LossRecorder(), LossRecorder()
    estimator = ke.Estimator(model_fn, model_dir=tempfile.mkdtemp())
    estimator.train(_input_fn(batch_size=batch_size), steps=steps, callbacks=[ours])
    reference = ke.model_to_estimator(model, model_dir=tempfile.mkdtemp())
    reference.train(_input_fn(batch_size=batch_size), steps=steps, callbacks=[theirs])
    return estimator, reference, ours.losses, theirs.losses


@given(
    kind=st.sampled_from(["sequential", "functional"]),
    hidden=st.lists(st.integers(1, 6), min_size=0, max_size=2),
    optimizer=st.sampled_from(sorted(_OPTIMIZERS)),
    batch_size=st.sampled_from([5, 8]),
    seed=st.integers(0, 1000),
    steps=st.integers(1, 10),
)
def test_estimator_on_keras_model_fn_trains_as_model_to_estimator(
    kind, hidden, optimizer, batch_size, seed, steps
):
    model = _model(kind, tuple(hidden), seed, optimizer)
    estimator, reference, ours, theirs = _train_both(
        model, ke.keras_model_fn(model), steps, batch_size
    )
    assert len(ours) == steps
    assert ours == theirs
    _assert_same_values(_values(estimator), _values(reference))
    assert int(estimator.get_variable_value("global_step")) == steps


def test_wrapped_model_fn_runs_training_hooks(caplog):
    model = _model()
    base_fn = ke.keras_model_fn(model)
    hooks = []

    @functools.wraps(base_fn)
    def model_fn(features, labels, mode):
        spec = base_fn(features, labels, mode)
        if mode != ke.ModeKeys.TRAIN:
            return spec
        made = [
            _RecordingHook(spec.loss),
            ke.LoggingTensorHook({"wrapped_loss": spec.loss}, every_n_iter=2),
        ]
        # The loop runs the hooks of the first (building) trace.
        hooks.append(made)
        return spec._replace(training_hooks=made)

    caplog.set_level(logging.INFO, logger="keras_estimator")
    estimator, reference, ours, theirs = _train_both(model, model_fn, 5, 8)
    assert ours == theirs
    _assert_same_values(_values(estimator), _values(reference))
    recorder = hooks[0][0]
    assert recorder.began
    assert [step for step, _ in recorder.seen] == [0, 1, 2, 3, 4]
    assert all(np.isfinite(loss) for _, loss in recorder.seen)
    assert any("wrapped_loss = " in record.getMessage() for record in caplog.records)
    # The wrapper's Estimator gives its Keras model back, too.
    trained = ke.keras_model_from_estimator(estimator)
    expected = ke.keras_model_from_estimator(reference)
    for mine, theirs_weight in zip(
        trained.get_weights(), expected.get_weights(), strict=True
    ):
        np.testing.assert_array_equal(mine, theirs_weight)


def test_wrapped_model_fn_adds_evaluation_metrics():
    model = _model()
    base_fn = ke.keras_model_fn(model)

    @functools.wraps(base_fn)
    def model_fn(features, labels, mode):
        spec = base_fn(features, labels, mode)
        if mode != ke.ModeKeys.EVAL:
            return spec
        metrics = dict(spec.eval_metric_ops)
        metrics["mean_loss"] = tf.compat.v1.metrics.mean(spec.loss)
        return spec._replace(eval_metric_ops=metrics)

    estimator = ke.Estimator(model_fn, model_dir=tempfile.mkdtemp())
    estimator.train(_input_fn(), steps=3)
    results = estimator.evaluate(_input_fn(repeat=False))
    assert {"accuracy", "loss", "mean_loss", "global_step"} <= set(results)
    assert results["mean_loss"] == pytest.approx(results["loss"], rel=1e-5)


def test_a_wrapper_without_functools_wraps_is_refused():
    base_fn = ke.keras_model_fn(_model())

    def model_fn(features, labels, mode):
        return base_fn(features, labels, mode)

    estimator = ke.Estimator(model_fn, model_dir=tempfile.mkdtemp())
    with pytest.raises(ValueError, match=r"functools\.wraps"):
        estimator.train(_input_fn(), steps=1)
    # Prediction too: it would otherwise use the model's own weights, not the
    # checkpoint's.
    trained = ke.Estimator(base_fn, model_dir=tempfile.mkdtemp())
    trained.train(_input_fn(), steps=1)
    hidden = ke.Estimator(model_fn, model_dir=trained.model_dir)
    with pytest.raises(ValueError, match=r"functools\.wraps"):
        next(iter(hidden.predict(_input_fn(repeat=False))))


def test_metric_names_map_renames_metrics():
    model = _model(metrics=("accuracy", "sparse_categorical_crossentropy"))
    names = {"accuracy": "acc", "sparse_categorical_crossentropy": "xent"}
    model_fn = ke.keras_model_fn(model, metric_names_map=names)
    estimator = ke.Estimator(model_fn, model_dir=tempfile.mkdtemp())
    estimator.train(_input_fn(), steps=2)
    results = estimator.evaluate(_input_fn(), steps=2)
    assert {"acc", "xent", "loss", "global_step"} <= set(results)
    assert not set(names) & set(results)
    reference = ke.model_to_estimator(
        model, model_dir=tempfile.mkdtemp(), metric_names_map=names
    )
    reference.train(_input_fn(), steps=2)
    assert results == reference.evaluate(_input_fn(), steps=2)


def test_metric_names_map_must_cover_the_compiled_metrics():
    model_fn = ke.keras_model_fn(
        _model(metrics=("accuracy", "mae")), metric_names_map={"accuracy": "a"}
    )
    estimator = ke.Estimator(model_fn, model_dir=tempfile.mkdtemp())
    with pytest.raises(ValueError, match=r"Invalid `metric_names_map`.*\['mae'\]"):
        estimator.evaluate(_input_fn(), steps=1)


def test_export_outputs_become_signatures(tmp_path):
    model = _model()
    model_fn = ke.keras_model_fn(
        model, export_outputs={"logits": ke.export.RegressionOutput}
    )
    estimator = ke.Estimator(model_fn, model_dir=str(tmp_path / "dir"))
    estimator.train(_input_fn(), steps=2)
    parsing_fn = ke.export.build_parsing_serving_input_receiver_fn(
        {"x": tf.io.FixedLenFeature([X.shape[1]], tf.float32)}
    )
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), parsing_fn)
    loaded = tf.saved_model.load(export_dir.decode())
    assert {"serving_default", "logits"} <= set(loaded.signatures)
    examples = [
        tf.train.Example(
            features=tf.train.Features(
                feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=row))
                }
            )
        ).SerializeToString()
        for row in X[:3]
    ]
    # A single-output regression signature of a 3-wide output: its values.
    outputs = loaded.signatures["logits"](inputs=tf.constant(examples))["outputs"]
    predicted = np.stack(
        [
            p["logits"]
            for p in estimator.predict(
                lambda: tf.data.Dataset.from_tensor_slices({"x": X[:3]}).batch(3)
            )
        ]
    )
    np.testing.assert_allclose(
        outputs.numpy().reshape(predicted.shape), predicted, rtol=1e-6
    )


def test_export_outputs_must_name_outputs():
    with pytest.raises(ValueError, match=r"\['nope'\].*outputs are \['logits'\]"):
        ke.keras_model_fn(_model(), export_outputs={"nope": ke.export.RegressionOutput})


@pytest.mark.parametrize("value", ["model", None, lambda x: x])
def test_not_a_keras_model_is_refused(value):
    with pytest.raises(
        TypeError, match=r"keras_model_fn needs a compiled keras.Model.*compile"
    ):
        ke.keras_model_fn(value)


def test_uncompiled_model_is_refused():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    with pytest.raises(
        ValueError, match=r"has not been compiled yet.*model.compile.*keras_model_fn"
    ):
        ke.keras_model_fn(model)


def test_the_user_model_is_left_untouched():
    model = _model()
    before = [w.copy() for w in model.get_weights()]
    model_fn = ke.keras_model_fn(model)
    assert model_fn.model is not model
    ke.Estimator(model_fn, model_dir=tempfile.mkdtemp()).train(_input_fn(), steps=3)
    for now, then in zip(model.get_weights(), before, strict=True):
        np.testing.assert_array_equal(now, then)


def test_public_name():
    from keras_estimator._src.keras_interop import keras_model_fn as module

    assert ke.keras_model_fn is module.keras_model_fn
    assert "keras_model_fn" in ke.__all__
