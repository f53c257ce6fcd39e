"""The tf.compat.v1 canned estimators' heads give tf.estimator 2.15's figures.

2.15's v1 DNN, Linear, Baseline and DNNLinearCombined classifiers and
regressors built the heads of its canned/head.py (summed loss by default,
`tf.compat.v1.metrics`). Each case of `tests/fixtures/tf215_v1_heads.json`
(made by `make_tf215_v1_head_fixture.py`) trains one of them three steps
from a fixed start (zeros, or a DNN warm-started from a written
checkpoint) and holds 2.15's `loss` and `average_loss` summaries of each
step, every `evaluate()` key over two batches, every `predict()` key, the
outputs of every exported signature, or the error bad labels raise.
"""

from __future__ import annotations

import glob
import json
import os
import re

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
import keras_estimator.compat.estimator as ke_v1
from tests.canned._tf1_checkpoints import write_tf1_checkpoint
from tests.fixtures.make_tf215_v1_head_fixture import estimator_kwargs

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf215_v1_heads.json")
with open(FIXTURE) as _file:
    DATA = json.load(_file)
CASES = sorted(name for name, case in DATA["cases"].items() if "error" not in case)
ERROR_CASES = sorted(name for name, case in DATA["cases"].items() if "error" in case)
RTOL, ATOL = 1e-5, 1e-6


def _labels(labels):
    array = np.asarray(labels)
    if array.dtype.kind in "US":
        return array.astype(bytes)
    if array.dtype.kind == "f":
        return array.astype(np.float32)
    return array.astype(np.int64)


def _estimator(case, tmp_path):
    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    kwargs = estimator_kwargs(case, columns)
    cls = case["class"]
    if "dnn" in case:
        start = tmp_path / "start"
        start.mkdir()
        values = {k: np.asarray(v, np.float32) for k, v in DATA["dnn"][str(case["dnn"])].items()}
        write_tf1_checkpoint(start, values, step=0)
        kwargs["warm_start_from"] = ke.WarmStartSettings(str(start), vars_to_warm_start="dnn/.*")
    return getattr(ke_v1, cls)(
        model_dir=str(tmp_path / "model"),
        config=ke.RunConfig(save_summary_steps=1, tf_random_seed=1),
        **kwargs,
    )


def _input_fn(case, labels, batch):
    features = {"x": np.asarray(DATA["x"], np.float32)}
    if "weights" in case:
        features["w"] = np.asarray(case["weights"], np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((features, _labels(labels))).batch(batch)

    return input_fn


def _train(case, tmp_path):
    estimator = _estimator(case, tmp_path)
    train_labels = case.get("train_labels", case["labels"])
    estimator.train(lambda: _input_fn(case, train_labels, 6)().repeat(), steps=3)
    return estimator


def _summaries(model_dir):
    written: dict[str, dict[str, float]] = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag in ("loss", "average_loss"):
                    written.setdefault(str(event.step), {})[value.tag] = value.simple_value
    return written


def _assert_close(got, want, what):
    want_array = np.asarray(want)
    got_array = np.asarray(got)
    if want_array.dtype.kind in "US":
        decoded = np.vectorize(lambda v: v.decode() if isinstance(v, bytes) else v)(got_array)
        np.testing.assert_array_equal(decoded, want_array, err_msg=what)
    else:
        assert got_array.shape == want_array.shape, (what, got_array.shape, want_array.shape)
        np.testing.assert_allclose(got_array, want_array, rtol=RTOL, atol=ATOL, err_msg=what)


@pytest.mark.parametrize("name", CASES)
def test_training_loss_evaluation_and_predictions_match_tf215(name, tmp_path):
    case = DATA["cases"][name]
    estimator = _train(case, tmp_path)

    summaries = _summaries(estimator.model_dir)
    assert sorted(summaries) == sorted(case["summaries"])
    for step, values in case["summaries"].items():
        assert sorted(summaries[step]) == sorted(values), step
        for tag, value in values.items():
            _assert_close(summaries[step][tag], value, f"step {step} {tag}")

    metrics = estimator.evaluate(_input_fn(case, case["labels"], 3))
    assert sorted(metrics) == sorted(case["eval"])
    for key, value in case["eval"].items():
        _assert_close(metrics[key], value, key)

    predictions = list(estimator.predict(_input_fn(case, case["labels"], 3)))
    assert sorted(predictions[0]) == sorted(case["predictions"])
    for key, values in case["predictions"].items():
        _assert_close([p[key] for p in predictions], values, key)


EXPORT_CASES = sorted(name for name in CASES if DATA["cases"][name].get("export"))


@pytest.mark.parametrize("name", EXPORT_CASES)
def test_exported_signatures_match_tf215(name, tmp_path):
    case = DATA["cases"][name]
    estimator = _train(case, tmp_path)
    spec = {"x": tf.io.FixedLenFeature([2], tf.float32)}
    receiver = ke.export.build_parsing_serving_input_receiver_fn(spec)
    path = estimator.export_saved_model(str(tmp_path / "export"), receiver)
    examples = [
        tf.train.Example(
            features=tf.train.Features(
                feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=row))}
            )
        ).SerializeToString()
        for row in DATA["x"]
    ]
    loaded = tf.saved_model.load(path.decode() if isinstance(path, bytes) else path)
    assert sorted(loaded.signatures) == sorted(case["signatures"])
    for key, outputs in case["signatures"].items():
        signature = loaded.signatures[key]
        (input_name,) = signature.structured_input_signature[1]
        result = signature(**{input_name: tf.constant(examples)})
        assert sorted(result) == sorted(outputs), key
        for output, value in outputs.items():
            _assert_close(result[output].numpy(), value, f"{key}/{output}")


@pytest.mark.parametrize("name", ERROR_CASES)
def test_bad_labels_raise_tf215s_error(name, tmp_path):
    case = DATA["cases"][name]
    estimator = _train(case, tmp_path)
    expected = getattr(tf.errors, case["error"]["type"], None) or {
        "ValueError": ValueError,
        "TypeError": TypeError,
    }[case["error"]["type"]]
    with pytest.raises(expected) as raised:
        estimator.evaluate(_input_fn(case, case["labels"], 3))
    assert type(raised.value).__name__ == case["error"]["type"]
    assert case["phrase"] in str(raised.value)


@pytest.mark.parametrize(
    "recorded",
    DATA["constructor_errors"],
    ids=lambda r: f"{r['class']}-{r['loss_reduction']}",
)
def test_a_tf_losses_reduction_is_refused_with_tf215s_phrase(recorded):
    kwargs: dict = {"hidden_units": [2]} if "DNN" in recorded["class"] else {}
    if "Baseline" not in recorded["class"]:
        kwargs["feature_columns"] = [tf.feature_column.numeric_column("x", shape=[2])]
    assert recorded["type"] == "ValueError"
    with pytest.raises(ValueError, match=f"^{re.escape(recorded['message'])}([.]|$)"):
        getattr(ke_v1, recorded["class"])(loss_reduction=recorded["loss_reduction"], **kwargs)
