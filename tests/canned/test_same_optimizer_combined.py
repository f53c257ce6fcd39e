"""`DNNLinearCombined*` given one optimizer name for both parts, against tf.estimator 2.15.

2.15 built one tf.keras 2 optimizer per part; the second one of the same
name had its variables uniquified by the graph (`training/Adagrad_1/...`,
the linear part's, with its own `iter`). The fixture
`tests/fixtures/tf215_same_optimizer/` (see
`make_tf215_same_optimizer_fixture.py`) holds two such model_dirs and, for
every optimizer name, the checkpoint variables of a tiny classifier after
3 steps.
"""

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests.canned.test_premade_fixtures import _dataset, _estimator
from tests.canned.test_premade_fixtures import _model_dir_at as fixture_model_dir_at

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf215_same_optimizer"
CASES = ["same_adagrad_classifier", "same_adam_regressor"]


def _case(name):
    return json.loads((FIXTURES / name / "case.json").read_text())


@pytest.mark.parametrize("name", CASES)
def test_2_15_model_dir_restores_to_its_predictions_and_metrics(name, tmp_path):
    case = _case(name)
    est = _estimator(case, fixture_model_dir_at(name, 20, tmp_path, FIXTURES))
    inputs = case["eval_input"]
    expected = np.load(FIXTURES / name / "predictions.npz")
    predictions = list(est.predict(lambda: _dataset(inputs, labels=False)))
    assert sorted(predictions[0]) == sorted(expected.files)
    for key in expected.files:
        ours = np.stack([p[key] for p in predictions])
        theirs = expected[key].reshape(ours.shape)
        if ours.dtype.kind in "SOU":
            np.testing.assert_array_equal(ours.astype(bytes), theirs.astype(bytes), err_msg=key)
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6, err_msg=key)
    metrics = est.evaluate(lambda: _dataset(inputs))
    theirs = json.loads((FIXTURES / name / "eval.json").read_text())
    assert sorted(metrics) == sorted(theirs)
    for key, value in theirs.items():
        np.testing.assert_allclose(metrics[key], value, rtol=1e-5, atol=1e-6, err_msg=key)


@pytest.mark.parametrize("name", CASES)
def test_training_from_2_15s_step_10_reproduces_its_step_20(name, tmp_path):
    case = _case(name)
    est = _estimator(case, fixture_model_dir_at(name, 10, tmp_path, FIXTURES))
    inputs = case["train_input"]
    assert inputs["batches_per_epoch"] == 5
    est.train(lambda: _dataset(inputs, repeat=True), steps=10)
    ours = est.latest_checkpoint()
    assert ours.endswith("model.ckpt-20")
    theirs = str(FIXTURES / name / "model_dir" / "model.ckpt-20")
    names = sorted(n for n, _ in tf.train.list_variables(theirs))
    assert names == sorted(n for n, _ in tf.train.list_variables(ours))
    kind = case["estimator"]["args"]["dnn_optimizer"]
    assert f"training/{kind}_1/iter" in names
    for variable in names:
        np.testing.assert_allclose(
            tf.train.load_variable(ours, variable),
            tf.train.load_variable(theirs, variable),
            rtol=1e-5,
            atol=1e-6,
            err_msg=variable,
        )


@pytest.mark.parametrize("optimizer", ["Adagrad", "Adam", "Ftrl", "RMSProp", "SGD"])
def test_each_name_for_both_parts_writes_2_15s_variables(optimizer, tmp_path):
    theirs = json.loads((FIXTURES / "names.json").read_text())[optimizer]
    rng = np.random.RandomState(0)
    x = rng.normal(size=(32,)).astype(np.float32)
    z = rng.normal(size=(32,)).astype(np.float32)
    labels = (x + z > 0).astype(np.int64)
    est = ke.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path),
        linear_feature_columns=[tf.feature_column.numeric_column("x")],
        dnn_feature_columns=[tf.feature_column.numeric_column("z")],
        dnn_hidden_units=[2],
        linear_optimizer=optimizer,
        dnn_optimizer=optimizer,
        config=ke.RunConfig(tf_random_seed=42),
    )
    est.train(
        lambda: tf.data.Dataset.from_tensor_slices(({"x": x, "z": z}, labels)).batch(8).repeat(),
        steps=3,
    )
    checkpoint = est.latest_checkpoint()
    ours = dict(tf.train.list_variables(checkpoint))
    assert sorted(ours) == sorted(theirs)
    for name, entry in theirs.items():
        assert list(ours[name]) == entry["shape"], name
        if "value" in entry:
            np.testing.assert_allclose(
                tf.train.load_variable(checkpoint, name), entry["value"], rtol=1e-6, err_msg=name
            )
