"""The canned estimators' training summaries in model_dir, as tf.estimator 2.15 wrote them.

From 2.15's step-0 checkpoint, two steps with `save_summary_steps=1` write
2.15's tags at steps 1 and 2 (`tests/fixtures/tf215_canned_summaries`, made
by `make_tf215_canned_summaries_fixture.py`), with 2.15's values: layer
activations and their share of zeros, the linear bias and share of zero
weights, and the loss; the tf.compat.v1 classes also `average_loss`.

The `mirrored_*` cases train under a MirroredStrategy of two CPUs, each
replica on its own batch of 8, as 2.15 did: the `loss` summary is the first
replica's (the head's, as 2.15's heads wrote it), and the tf.compat.v1
classes' summed loss is not divided by the replica count, so they reach
2.15's variables.
"""

from __future__ import annotations

import glob
import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
import keras_estimator.compat.estimator as ke_v1

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf215_canned_summaries")
X = np.random.RandomState(0).rand(32, 2).astype("float32")
Y = X.sum(1, keepdims=True)
LABELS = {"y": Y, "y3": np.minimum((Y * 1.5).astype("int64"), 2), "ab": {"a": Y, "b": Y}}
V2_CASES = ["dnn_regressor", "linear_classifier3", "linear_regressor", "combined_classifier3"]
# A named head's loss/<name>, and each of a MultiHead's heads' loss/<name>.
HEAD_CASES = ["named_head_dnn", "multi_head_dnn"]
# tf.compat.v1.estimator's classes: one more scope, and average_loss (summed loss).
V1_CASES = [
    "v1_dnn_regressor",
    "v1_linear_classifier3",
    "v1_combined_regressor",
    "v1_baseline_classifier3",
]
MIRRORED_CASES = [
    "mirrored_linear_regressor",
    "mirrored_linear_classifier3",
    "mirrored_v1_linear_classifier3",
    "mirrored_v1_linear_regressor",
]


def _fixture(case: str) -> dict:
    with open(os.path.join(FIXTURES, case, "summaries.json")) as f:
        return json.load(f)


def _train_from_tf215_start(
    case: str, tmp_path, variables: dict | None = None
) -> dict[int, dict[str, object]]:
    fixture = _fixture(case)
    model_dir = str(tmp_path / case)
    if case.startswith("mirrored_v1_"):
        # 2.15 named the v1 optimizers' slots otherwise under a strategy
        # (`linear/linear/linear_model/x/weights/Ftrl`, not `.../part_0/Ftrl`);
        # its step 0 is the linear model's zeros and Ftrl's initial slots,
        # which a new model_dir starts from too.
        os.makedirs(model_dir)
    else:
        shutil.copytree(os.path.join(FIXTURES, case, "model_dir"), model_dir)
        with open(os.path.join(model_dir, "checkpoint"), "w") as f:
            f.write('model_checkpoint_path: "model.ckpt-0"\n')
    module = ke if fixture["api"] == "v2" else ke_v1
    columns = [tf.feature_column.numeric_column("x", [2])]
    kwargs = dict(fixture["kwargs"])
    if kwargs.get("head") == "named":
        kwargs["head"] = ke.RegressionHead(name="h1")
    elif kwargs.get("head") == "multi":
        kwargs["head"] = ke.MultiHead([ke.RegressionHead(name="a"), ke.RegressionHead(name="b")])
    if "Baseline" in fixture["class"]:
        pass
    elif "Combined" in fixture["class"]:
        kwargs.update(linear_feature_columns=columns, dnn_feature_columns=columns)
    else:
        kwargs.update(feature_columns=columns)
    strategy = None
    if case.startswith("mirrored_"):
        strategy = tf.distribute.MirroredStrategy(
            ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice()
        )
    estimator = getattr(module, fixture["class"])(
        model_dir=model_dir,
        config=ke.RunConfig(save_summary_steps=1, train_distribute=strategy),
        **kwargs,
    )
    label = LABELS[fixture["labels"]]

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, label)).repeat().batch(8)

    estimator.train(input_fn, steps=2)
    if variables is not None:
        variables.update(
            {name: estimator.get_variable_value(name) for name in fixture.get("variables", {})}
        )
    written: dict[int, dict[str, object]] = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                written.setdefault(event.step, {})[value.tag] = value
    return written


def _check_value(tag: str, expected: object, value) -> None:
    if isinstance(expected, float):
        assert value.WhichOneof("value") == "simple_value", tag
        np.testing.assert_allclose(value.simple_value, expected, rtol=1e-5, atol=1e-6, err_msg=tag)
        return
    assert isinstance(expected, dict)
    assert value.WhichOneof("value") == "histo", tag
    histo = value.histo
    for field in ("min", "max", "num", "sum", "sum_squares"):
        np.testing.assert_allclose(
            getattr(histo, field), expected[field], rtol=1e-5, atol=1e-5, err_msg=f"{tag} {field}"
        )
    np.testing.assert_allclose(list(histo.bucket_limit), expected["bucket_limit"], rtol=1e-6)
    np.testing.assert_allclose(list(histo.bucket), expected["bucket"])


@pytest.mark.parametrize("case", V2_CASES + HEAD_CASES + V1_CASES)
def test_training_summaries_match_tf215(case, tmp_path):
    written = _train_from_tf215_start(case, tmp_path)
    expected = _fixture(case)["summaries"]
    assert sorted(written) == sorted(int(step) for step in expected)
    for step, values in expected.items():
        assert sorted(written[int(step)]) == sorted(values), step
        for tag, value in values.items():
            _check_value(tag, value, written[int(step)][tag])


@pytest.mark.parametrize("case", MIRRORED_CASES)
def test_training_summaries_and_weights_under_a_mirrored_strategy_match_tf215(case, tmp_path):
    variables: dict = {}
    written = _train_from_tf215_start(case, tmp_path, variables)
    fixture = _fixture(case)
    assert sorted(written) == sorted(int(step) for step in fixture["summaries"])
    for step, values in fixture["summaries"].items():
        assert sorted(written[int(step)]) == sorted(values), step
        for tag, value in values.items():
            _check_value(tag, value, written[int(step)][tag])
    assert fixture["variables"]
    for name, value in fixture["variables"].items():
        np.testing.assert_allclose(variables[name], value, rtol=1e-6, atol=1e-7, err_msg=name)
