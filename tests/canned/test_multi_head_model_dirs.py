"""Canned estimators over a MultiHead restore tf.estimator 2.15's model_dirs and train on.

2.15 named the optimizer's variables of a MultiHead of N heads
`training_<N>/<Optimizer>/...` (each head's create_estimator_spec took a
`training` name scope first); these restored nothing here ("has no value for
variables"), the optimizer being looked for under `training/`.
`tests/fixtures/make_tf215_multi_head_fixture.py` wrote the model_dirs with
2.15: DNNEstimator, LinearEstimator and DNNLinearCombinedEstimator over heads
a (binary) and b (regression), and a DNNEstimator over three heads (with c,
3 classes). Restoring 2.15's step 2 and training 2 steps on its batches gives
2.15's step-4 variables (every one, the optimizer's slots included) and
evaluation.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf215_multi_head"
CASES = [
    "dnn",
    "dnn_three_heads",
    pytest.param("linear", marks=pytest.mark.slow),
    pytest.param("combined", marks=pytest.mark.slow),
]


def _data(case):
    x = np.random.RandomState(0).normal(size=(8, 2)).astype(np.float32)
    features = {"x0": x[:, 0], "x1": x[:, 1]}
    labels = {
        "a": (np.arange(8) % 2).astype(np.int64),
        "b": (x[:, 0] - x[:, 1]).astype(np.float32),
    }
    if case == "dnn_three_heads":
        labels["c"] = (np.arange(8) % 3).astype(np.int64)
    return features, labels


def _estimator(case, model_dir):
    heads = [ke.BinaryClassHead(name="a"), ke.RegressionHead(name="b")]
    if case == "dnn_three_heads":
        heads.append(ke.MultiClassHead(3, name="c"))
    head = ke.MultiHead(heads)
    config = ke.RunConfig(tf_random_seed=42, save_checkpoints_steps=2)
    x0 = tf.feature_column.numeric_column("x0")
    x1 = tf.feature_column.numeric_column("x1")
    if case in ("dnn", "dnn_three_heads"):
        return ke.DNNEstimator(head, [3], [x0, x1], model_dir=model_dir, config=config)
    if case == "linear":
        return ke.LinearEstimator(head, [x0, x1], model_dir=model_dir, config=config)
    return ke.DNNLinearCombinedEstimator(
        head,
        linear_feature_columns=[x0],
        dnn_feature_columns=[x1],
        dnn_hidden_units=[3],
        model_dir=model_dir,
        config=config,
    )


def _model_dir_at_step_2(case, tmp_path):
    model_dir = tmp_path / case
    model_dir.mkdir()
    for source in (FIXTURES / case / "model_dir").glob("model.ckpt-2.*"):
        shutil.copy(source, model_dir / source.name)
    (model_dir / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-2"\n')
    return str(model_dir)


@pytest.mark.parametrize("case", CASES)
def test_training_on_from_2_15s_step_2_gives_its_step_4(case, tmp_path):
    features, labels = _data(case)
    est = _estimator(case, _model_dir_at_step_2(case, tmp_path))
    expected_eval = json.loads((FIXTURES / case / "eval.json").read_text())

    def eval_input():
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(8)

    ours = est.evaluate(eval_input)
    assert sorted(ours) == sorted(expected_eval["2"])
    for key, value in expected_eval["2"].items():
        np.testing.assert_allclose(ours[key], value, rtol=1e-5, atol=1e-6, err_msg=key)

    est.train(
        lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(4).repeat(),
        steps=2,
    )
    theirs = json.loads((FIXTURES / case / "variables.json").read_text())
    assert sorted(est.get_variable_names()) == sorted(theirs)
    for name, value in theirs.items():
        np.testing.assert_allclose(
            est.get_variable_value(name), value, rtol=1e-5, atol=1e-6, err_msg=name
        )
    ours = est.evaluate(eval_input)
    for key, value in expected_eval["4"].items():
        np.testing.assert_allclose(ours[key], value, rtol=1e-5, atol=1e-6, err_msg=key)
