"""EstimatorSpecs 2.15 built: what it ran is run the same, what failed fails as there.

2.15's outcomes (its own runs, tensorflow-estimator 2.15.0 on TF 2.15.1) for a
model_fn with w = 0.5 over x = 0..7 in batches of 4, two SGD steps (rate
0.01) towards labels 1, then evaluate, predict and export:

- `predictions={0: p, 1: 2p}`: trained; evaluated loss 0.45184618; predict
  and export raised ValueError 'Prediction output key must be a string; got
  0.' (the default serving signature is made of the predictions). With
  `export_outputs` given, predict yielded `{0: array([0.])}, {0:
  array([0.29315])}, ...` and the export was written.
- `predictions={'b': 2p, 0: p, 'a': 3p}` (int and str keys), with
  `export_outputs`: predict yielded dicts keyed `['b', 0, 'a']`, in that
  order, the second example's values 0.5863, 0.29315, 0.87945; one batch at a
  time, the first batch's first two rows [0, 0.5863], [0, 0.29315],
  [0, 0.87945]; `predict_keys=['a', 0]` yielded keys `[0, 'a']`, the
  predictions' order (so did `['a', 'z']` of `{'z': .., 'a': ..}`: `['z', 'a']`).
- a bool loss (`reduce_all(p > 0)`): train raised TypeError "Value passed to
  parameter 'values' has DataType bool not in list of allowed values: ...";
  evaluate (no checkpoint) returned loss 0.5; predict ran.
- a string loss: train raised the same TypeError with DataType string;
  evaluate raised UnimplementedError ("Graph execution error: ... Cast
  string to float is not supported"); predict ran.
- `mode='bogus'` (and 3, 'predict', or 'train' whatever the mode called):
  trained, evaluated loss 0.45184618 and predicted 0., 0.29315, 0.5863;
  export raised ValueError 'Invalid mode key: bogus.' (for 3: 'Invalid mode
  key: 3.'; 'predict' and 'train' exported). Without train_op, train raised
  TypeError 'Argument `fetch` = None has invalid type "NoneType". Cannot be
  None' and evaluate returned loss 1.875 (w = 0.5, untrained); without loss,
  train raised ValueError "Tried to convert 'values' to a tensor and failed.
  Error: None values not supported." and evaluate ValueError 'None values
  not supported.'; without predictions, predict raised TypeError
  "'NoneType' object cannot be interpreted as an integer".
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

X = np.arange(8, dtype=np.float32).reshape(8, 1)


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(
        ({"x": X}, np.ones((8, 1), np.float32))
    ).batch(4)


def _serving():
    x = tf.compat.v1.placeholder(tf.float32, [None, 1])
    return ke.export.ServingInputReceiver({"x": x}, {"x": x})


def _model_fn(spec_of):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable(
            "w", [1, 1], initializer=tf.compat.v1.constant_initializer(0.5)
        )
        prediction = tf.matmul(features["x"], w)
        loss = tf.reduce_mean(tf.square(prediction - 1.0))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
            loss, tf.compat.v1.train.get_global_step()
        )
        return spec_of(mode, prediction, loss, train_op)

    return model_fn


def _estimator(tmp_path, spec_of):
    return ke.Estimator(_model_fn(spec_of), str(tmp_path / "model"))


TRAINED = [0.0, 0.29315, 0.5863]


def _first_three(est, key="p"):
    return [float(p[key][0]) for p in list(est.predict(_input_fn))[:3]]


def test_int_prediction_keys_train_evaluate_and_predict_with_export_outputs(tmp_path):
    est = _estimator(
        tmp_path,
        lambda mode, p, loss, op: ke.EstimatorSpec(
            mode,
            loss=loss,
            train_op=op,
            predictions={0: p},
            export_outputs={"serving_default": ke.export.PredictOutput({"p": p})},
        ),
    )
    est.train(_input_fn, steps=2)
    assert est.evaluate(_input_fn)["loss"] == pytest.approx(0.45184618, rel=1e-6)
    predictions = list(est.predict(_input_fn))[:3]
    assert [list(p) for p in predictions] == [[0]] * 3
    np.testing.assert_allclose([p[0][0] for p in predictions], TRAINED, rtol=1e-5)
    assert est.export_saved_model(str(tmp_path / "export"), _serving)


def test_int_prediction_keys_cannot_name_the_default_signature(tmp_path):
    est = _estimator(
        tmp_path,
        lambda mode, p, loss, op: ke.EstimatorSpec(
            mode, loss=loss, train_op=op, predictions={0: p, 1: 2 * p}
        ),
    )
    est.train(_input_fn, steps=2)
    assert est.evaluate(_input_fn)["loss"] == pytest.approx(0.45184618, rel=1e-6)
    first = r"^Prediction output key must be a string"
    with pytest.raises(ValueError, match=first):
        list(est.predict(_input_fn))
    with pytest.raises(ValueError, match=first):
        est.export_saved_model(str(tmp_path / "export"), _serving)


def test_int_and_str_prediction_keys_are_yielded_in_the_model_fns_order(tmp_path):
    # Failed in tf.nest before: "'<' not supported between instances of 'str'
    # and 'int'".
    est = _estimator(
        tmp_path,
        lambda mode, p, loss, op: ke.EstimatorSpec(
            mode,
            loss=loss,
            train_op=op,
            predictions={"b": 2 * p, 0: p, "a": 3 * p},
            export_outputs={"serving_default": ke.export.PredictOutput({"p": p})},
        ),
    )
    est.train(_input_fn, steps=2)
    predictions = list(est.predict(_input_fn))
    assert [list(p) for p in predictions] == [["b", 0, "a"]] * 8
    np.testing.assert_allclose(
        [float(v[0]) for v in predictions[1].values()], [0.5863, 0.29315, 0.87945], rtol=1e-5
    )
    batches = list(est.predict(_input_fn, yield_single_examples=False))
    assert [list(b) for b in batches] == [["b", 0, "a"]] * 2
    np.testing.assert_allclose(
        [v[:2, 0] for v in batches[0].values()],
        [[0, 0.5863], [0, 0.29315], [0, 0.87945]],
        rtol=1e-5,
    )
    selected = list(est.predict(_input_fn, predict_keys=["a", 0]))
    assert [list(p) for p in selected] == [[0, "a"]] * 8
    np.testing.assert_allclose(selected[1][0], [0.29315], rtol=1e-5)
    assert est.export_saved_model(str(tmp_path / "export"), _serving)


def test_predict_keys_keep_the_predictions_order(tmp_path):
    est = _estimator(
        tmp_path,
        lambda mode, p, loss, op: ke.EstimatorSpec(
            mode, loss=loss, train_op=op, predictions={"z": p, "a": 3 * p}
        ),
    )
    est.train(_input_fn, steps=2)
    first = next(iter(est.predict(_input_fn, predict_keys=["a", "z"])))
    assert list(first) == ["z", "a"]


@pytest.mark.parametrize("dtype", ["bool", "string"])
def test_a_bool_or_string_loss_fails_train_with_2_15s_type_error(tmp_path, dtype):
    def spec_of(mode, p, loss, op):
        odd = tf.reduce_all(p > 0) if dtype == "bool" else tf.constant("abc")
        return ke.EstimatorSpec(mode, loss=odd, train_op=op, predictions={"p": p})

    est = _estimator(tmp_path, spec_of)
    with pytest.raises(
        TypeError,
        match=rf"^Value passed to parameter 'values' has DataType {dtype} not in "
        "list of allowed values",
    ):
        est.train(_input_fn, steps=2)
    # Predicting does not use the loss.
    assert _first_three(est) == [0.0, 0.5, 1.0]
    if dtype == "bool":
        # The mean of the per-batch bools: False (x = 0..3), True (4..7).
        assert est.evaluate(_input_fn)["loss"] == 0.5
    else:
        with pytest.raises(
            tf.errors.UnimplementedError,
            match=r"^Graph execution error: Cast string to float is not supported",
        ):
            est.evaluate(_input_fn)


def test_a_spec_of_mode_bogus_runs_in_the_mode_called_and_is_not_exported(tmp_path):
    est = _estimator(
        tmp_path,
        lambda mode, p, loss, op: ke.EstimatorSpec(
            "bogus", loss=loss, train_op=op, predictions={"p": p}
        ),
    )
    est.train(_input_fn, steps=2)
    assert est.evaluate(_input_fn)["loss"] == pytest.approx(0.45184618, rel=1e-6)
    np.testing.assert_allclose(_first_three(est), TRAINED, rtol=1e-5)
    with pytest.raises(ValueError, match=r"^Invalid mode key: bogus\."):
        est.export_saved_model(str(tmp_path / "export"), _serving)


def test_a_train_spec_returned_in_every_mode_runs_and_exports(tmp_path):
    # Refused before as "model_fn was called in mode 'eval' but returned an
    # EstimatorSpec for mode 'train'".
    est = _estimator(
        tmp_path,
        lambda mode, p, loss, op: ke.EstimatorSpec(
            ke.ModeKeys.TRAIN, loss=loss, train_op=op, predictions={"p": p}
        ),
    )
    est.train(_input_fn, steps=2)
    assert est.evaluate(_input_fn)["loss"] == pytest.approx(0.45184618, rel=1e-6)
    np.testing.assert_allclose(_first_three(est), TRAINED, rtol=1e-5)
    assert est.export_saved_model(str(tmp_path / "export"), _serving)


@pytest.mark.parametrize(
    ("missing", "call", "error", "first"),
    [
        ("train_op", "train", TypeError, r'Argument `fetch` = None has invalid type "NoneType"'),
        ("loss", "train", ValueError, r"Tried to convert 'values' to a tensor and failed"),
        ("loss", "evaluate", ValueError, r"None values not supported"),
        ("predictions", "predict", TypeError, r"'NoneType' object cannot be interpreted as an integer"),
    ],
)  # fmt: skip
def test_a_bogus_spec_missing_what_the_mode_runs_fails_as_in_2_15(
    tmp_path, missing, call, error, first
):
    def spec_of(mode, p, loss, op):
        fields = {"loss": loss, "train_op": op, "predictions": {"p": p}}
        del fields[missing]
        return ke.EstimatorSpec("bogus", **fields)

    est = _estimator(tmp_path, spec_of)
    run = {
        "train": lambda: est.train(_input_fn, steps=2),
        "evaluate": lambda: est.evaluate(_input_fn),
        "predict": lambda: list(est.predict(_input_fn)),
    }[call]
    with pytest.raises(error, match=f"^{first}") as raised:
        run()
    assert f"with no {missing}" in str(raised.value)


def test_a_bogus_spec_without_train_op_still_evaluates_untrained(tmp_path):
    est = _estimator(
        tmp_path,
        lambda mode, p, loss, op: ke.EstimatorSpec(
            "bogus", loss=loss, predictions={"p": p}
        ),
    )
    # w = 0.5: mean of (0.5 x - 1)^2 over x = 0..7.
    assert est.evaluate(_input_fn)["loss"] == pytest.approx(1.875, rel=1e-6)


class _SeenPredictions(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.logs = []

    def on_predict_batch_end(self, batch, logs=None):
        self.logs.append(dict(logs))


def test_keras_callbacks_see_the_prediction_keys_predict_yields(tmp_path):
    # They saw positional keys ('00000000', '00000001', ...) for a dict with
    # int keys beside str keys, where predict() yields the model_fn's keys.
    est = _estimator(
        tmp_path,
        lambda mode, p, loss, op: ke.EstimatorSpec(
            mode,
            loss=loss,
            train_op=op,
            predictions={"b": 2 * p, 0: p, "a": 3 * p},
            export_outputs={"serving_default": ke.export.PredictOutput({"p": p})},
        ),
    )
    est.train(_input_fn, steps=2)
    seen = _SeenPredictions()
    batches = list(est.predict(_input_fn, yield_single_examples=False, callbacks=[seen]))
    assert [list(logs) for logs in seen.logs] == [["b", 0, "a"]] * 2
    for logs, batch in zip(seen.logs, batches, strict=True):
        for key, value in batch.items():
            np.testing.assert_array_equal(logs[key], value)
    np.testing.assert_allclose(seen.logs[0][0][:, 0], [0.0, 0.29315, 0.5863, 0.87945], rtol=1e-5)


def test_keras_callbacks_see_str_prediction_keys_as_model_predict_shows_them(tmp_path):
    # Keras' predict flattens a dict of outputs into the logs, keys sorted.
    est = _estimator(
        tmp_path,
        lambda mode, p, loss, op: ke.EstimatorSpec(
            mode, loss=loss, train_op=op, predictions={"z": p, "a": 3 * p}
        ),
    )
    est.train(_input_fn, steps=2)
    ours = _SeenPredictions()
    list(est.predict(_input_fn, callbacks=[ours]))
    inputs = keras.Input((1,))
    model = keras.Model(inputs, {"z": inputs, "a": 3 * inputs})
    theirs = _SeenPredictions()
    model.predict(X, batch_size=4, callbacks=[theirs], verbose=0)
    assert [list(logs) for logs in ours.logs] == [list(logs) for logs in theirs.logs]
    assert [list(logs) for logs in ours.logs] == [["a", "z"]] * 2


def test_a_model_fn_as_keras_model_predicts_int_and_str_keys(tmp_path):
    # Model.predict of model_fn_to_keras joined the batches through tf.nest,
    # which failed: "'<' not supported between instances of 'int' and 'str'".
    model_fn = _model_fn(
        lambda mode, p, loss, op: ke.EstimatorSpec(
            mode,
            loss=loss,
            train_op=op,
            predictions={"b": 2 * p, 0: p},
            export_outputs={"serving_default": ke.export.PredictOutput({"p": p})},
        )
    )
    model = ke.model_fn_to_keras(model_fn, str(tmp_path / "keras"))
    model.fit(_input_fn(), steps_per_epoch=2, verbose=0)
    joined = model.predict(tf.data.Dataset.from_tensor_slices({"x": X}).batch(4))
    assert list(joined) == ["b", 0]
    np.testing.assert_allclose(joined[0][:3, 0], TRAINED, rtol=1e-5)
    np.testing.assert_allclose(joined["b"], 2 * joined[0])
    assert joined[0].shape == (8, 1)
