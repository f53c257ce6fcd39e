"""Heads give tf.estimator 2.15's loss, metrics and predictions, to 1e-6.

The expected values are 2.15's own, recorded by
``tests/fixtures/make_tf215_head_fixture.py``: named cases for soft binary
labels, per-dimension regression weights, a normalized weight column and
sequence (rank-3) logits; random cases of legal shapes (weights absent,
``[D0..DN]``, ``[D0..DN, 1]`` or per logit, labels with or without their
last dimension, label vocabularies, named heads, regularization losses, and
MultiHeads of two such heads) for one property per head.
"""

import json
import pathlib

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke

_FIXTURE = pathlib.Path(__file__).parents[1] / "fixtures" / "tf215_heads.json"
CASES = json.loads(_FIXTURE.read_text())["cases"]
NAMED = [case for case in CASES if not case["name"].startswith("random_")]
_DTYPES = {"float32": np.float32, "int64": np.int64, "string": np.bytes_}
TOLERANCE = {"rtol": 1e-6, "atol": 1e-6}


def _head(case, reduction):
    weight_column = None
    if case.get("weights") is not None:
        weight_column = "w"
        if case.get("normalizer_shift") is not None:
            shift = case["normalizer_shift"]
            weight_column = tf.feature_column.numeric_column(
                "w", normalizer_fn=lambda x: x + shift
            )
    common = {"weight_column": weight_column, "loss_reduction": reduction}
    kind = case["head"]
    if kind == "multi_head":
        heads = [_head(dict(part, weights=case.get("weights")), reduction)
                 for part in case["heads"]]
        return ke.MultiHead(heads, head_weights=case.get("head_weights"))
    if case.get("name_"):
        common["name"] = case["name_"]
    if case.get("vocabulary"):
        common["label_vocabulary"] = case["vocabulary"]
    if kind == "logistic":
        return ke.LogisticRegressionHead(**common)
    if kind == "binary":
        return ke.BinaryClassHead(thresholds=case.get("thresholds"), **common)
    if kind == "multi_class":
        return ke.MultiClassHead(case["n_classes"], **common)
    if kind == "regression":
        return ke.RegressionHead(label_dimension=case["label_dimension"], **common)
    if kind == "poisson":
        return ke.PoissonRegressionHead(label_dimension=case["label_dimension"], **common)
    assert kind == "multi_label", kind
    return ke.MultiLabelHead(case["n_classes"], thresholds=case.get("thresholds"), **common)


def _inputs(case):
    logits = np.asarray(case["logits"], np.float32)
    if case["head"] == "multi_head":
        labels = {
            part["name_"]: np.asarray(part["labels"], _DTYPES[part["labels_dtype"]])
            for part in case["heads"]
        }
    else:
        labels = np.asarray(case["labels"], _DTYPES[case["labels_dtype"]])
    features = {"x": np.zeros([logits.shape[0], 1], np.float32)}
    if case.get("weights") is not None:
        features["w"] = np.asarray(case["weights"], np.float32)
    regularization = case.get("regularization")
    reg = [tf.constant(r, tf.float32) for r in regularization] if regularization else None
    return logits, labels, features, reg


def _assert_head_matches_2_15(case):
    logits, labels, features, reg = _inputs(case)
    expected = case["expected"]
    for reduction, key in (("sum_over_batch_size", "loss"), ("sum", "loss_sum")):
        head = _head(case, reduction)
        loss = head.loss(labels, logits, features=features, regularization_losses=reg)
        np.testing.assert_allclose(float(loss), expected[key], **TOLERANCE, err_msg=key)
    head = _head(case, "sum_over_batch_size")
    metrics = head.update_metrics(head.metrics(reg), features, logits, labels, reg)
    assert sorted(metrics) == sorted(expected["metrics"])
    for key, want in expected["metrics"].items():
        got = float(metrics[key].result())
        np.testing.assert_allclose(got, want, **TOLERANCE, err_msg=key)
    predictions = {
        "/".join(key) if isinstance(key, tuple) else key: value
        for key, value in head.predictions(logits).items()
    }
    for key, want in expected["predictions"].items():
        np.testing.assert_allclose(
            np.asarray(predictions[key]), np.asarray(want), **TOLERANCE, err_msg=key
        )
    for key, want in expected["string_predictions"].items():
        np.testing.assert_array_equal(
            np.asarray(predictions[key]).astype(str), np.asarray(want), err_msg=key
        )
    assert sorted(predictions) == sorted([*expected["predictions"], *expected["string_predictions"]])


@pytest.mark.parametrize("case", NAMED, ids=[case["name"] for case in NAMED])
def test_named_case_equals_2_15(case):
    _assert_head_matches_2_15(case)


def _random(kind):
    return st.sampled_from([c for c in CASES if c["name"].startswith("random_") and c["head"] == kind])


@given(case=_random("binary"))
def test_binary_class_head_equals_2_15_on_random_inputs(case):
    _assert_head_matches_2_15(case)


@given(case=_random("multi_class"))
def test_multi_class_head_equals_2_15_on_random_inputs(case):
    _assert_head_matches_2_15(case)


@given(case=_random("regression"))
def test_regression_head_equals_2_15_on_random_inputs(case):
    _assert_head_matches_2_15(case)


@given(case=_random("poisson"))
def test_poisson_regression_head_equals_2_15_on_random_inputs(case):
    _assert_head_matches_2_15(case)


@given(case=_random("multi_label"))
def test_multi_label_head_equals_2_15_on_random_inputs(case):
    _assert_head_matches_2_15(case)


@given(case=_random("logistic"))
def test_logistic_regression_head_equals_2_15_on_random_inputs(case):
    _assert_head_matches_2_15(case)


@given(case=_random("multi_head"))
def test_multi_head_equals_2_15_on_random_inputs(case):
    _assert_head_matches_2_15(case)


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c["name"].startswith("random_")],
    ids=lambda c: f"{c['name']}_{c['head']}",
)
def test_every_recorded_random_case_equals_2_15(case):
    _assert_head_matches_2_15(case)
