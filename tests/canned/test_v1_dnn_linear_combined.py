"""`tf.compat.v1.estimator.DNNLinearCombined*` against tf.estimator 2.15.

The fixture `tests/fixtures/tf215_v1_combined/` (written by 2.15's
`tf.compat.v1.estimator.DNNLinearCombinedClassifier`, 3 wine classes, a
linear and a DNN part; see `make_tf215_v1_combined_fixture.py`) restores here
to 2.15's predictions and metrics, and training from its step 10 on its
batches reproduces its step 20, plain v1 slots and global step included. The
constructors' 2.15 signatures are checked in `tests/integration/test_api_parity.py`.
"""

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.canned import v1_dnn_linear_combined, v1_optimizers
from tests.canned.test_premade_fixtures import _column, _dataset
from tests.canned.test_premade_fixtures import _model_dir_at as fixture_model_dir_at

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf215_v1_combined"
CASE = "v1_dnn_linear_combined_classifier"

def _case():
    return json.loads((FIXTURES / CASE / "case.json").read_text())


def _model_dir_at(step, tmp_path):
    return fixture_model_dir_at(CASE, step, tmp_path, FIXTURES)


def _estimator(case, model_dir):
    spec = case["estimator"]
    assert spec["namespace"] == "tf.compat.v1.estimator"
    args = dict(spec["args"])
    for key in ("linear_feature_columns", "dnn_feature_columns"):
        args[key] = [_column(c) for c in args[key]]
    config = ke.RunConfig(tf_random_seed=spec["config"]["tf_random_seed"])
    cls = getattr(v1_dnn_linear_combined, spec["class"])
    return cls(model_dir=str(model_dir), config=config, **args)


def test_2_15_v1_model_dir_restores_to_its_predictions_and_metrics(tmp_path):
    case = _case()
    est = _estimator(case, _model_dir_at(20, tmp_path))
    inputs = case["eval_input"]
    expected = np.load(FIXTURES / CASE / "predictions.npz")
    predictions = list(est.predict(lambda: _dataset(inputs, labels=False)))
    assert sorted(predictions[0]) == sorted(expected.files)
    for key in expected.files:
        ours = np.stack([p[key] for p in predictions])
        theirs = expected[key].reshape(ours.shape)
        if ours.dtype.kind in "SOU":
            np.testing.assert_array_equal(
                ours.astype(bytes), theirs.astype(bytes), err_msg=key
            )
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6, err_msg=key)
    metrics = est.evaluate(lambda: _dataset(inputs))
    theirs = json.loads((FIXTURES / CASE / "eval.json").read_text())
    assert sorted(metrics) == sorted(theirs)
    for key, value in theirs.items():
        np.testing.assert_allclose(
            metrics[key], value, rtol=1e-5, atol=1e-6, err_msg=key
        )


def test_training_from_2_15s_v1_step_10_reproduces_its_step_20(tmp_path):
    case = _case()
    est = _estimator(case, _model_dir_at(10, tmp_path))
    inputs = case["train_input"]
    assert inputs["batches_per_epoch"] == 5
    est.train(lambda: _dataset(inputs, repeat=True), steps=10)
    ours = est.latest_checkpoint()
    assert ours.endswith("model.ckpt-20")
    theirs = str(FIXTURES / CASE / "model_dir" / "model.ckpt-20")
    names = sorted(n for n, _ in tf.train.list_variables(theirs))
    assert names == sorted(n for n, _ in tf.train.list_variables(ours))
    assert "dnn/logits/kernel/Adagrad" in names
    assert "linear/linear_model/color/weights/Ftrl_1" in names
    for variable in names:
        np.testing.assert_allclose(
            tf.train.load_variable(ours, variable),
            tf.train.load_variable(theirs, variable),
            rtol=1e-5,
            atol=1e-6,
            err_msg=variable,
        )


def _wine_like(rows=32):
    rng = np.random.RandomState(0)
    x = rng.normal(size=(rows,)).astype(np.float32)
    z = rng.normal(size=(rows,)).astype(np.float32)
    return (
        {"x": x, "z": z},
        (x + z > 0).astype(np.int64),
        (2 * x - z).astype(np.float32),
    )


def _train(est, labels_index, steps=3):
    features, classes, values = _wine_like()
    labels = classes if labels_index == 0 else values

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(8).repeat()

    est.train(input_fn, steps=steps)
    return est.latest_checkpoint()


def test_regressor_and_single_parts_train_with_plain_v1_slots(tmp_path):
    x = tf.feature_column.numeric_column("x")
    z = tf.feature_column.numeric_column("z")
    reg = v1_dnn_linear_combined.DNNLinearCombinedRegressor(
        model_dir=str(tmp_path / "reg"),
        linear_feature_columns=[x],
        dnn_feature_columns=[z],
        dnn_hidden_units=[2],
    )
    ckpt = _train(reg, 1)
    names = dict(tf.train.list_variables(ckpt))
    assert tf.train.load_variable(ckpt, "global_step") == 3
    assert "linear/linear_model/x/weights/Ftrl" in names
    assert "dnn/hiddenlayer_0/kernel/Adagrad" in names
    assert not any(
        n.startswith("training/") or "/t_0/" in n or "/part_0/" in n for n in names
    )

    linear_only = v1_dnn_linear_combined.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path / "lin"), linear_feature_columns=[x, z]
    )
    ckpt = _train(linear_only, 0)
    assert tf.train.load_variable(ckpt, "global_step") == 3
    assert not any(n.startswith("dnn/") for n, _ in tf.train.list_variables(ckpt))

    dnn_only = v1_dnn_linear_combined.DNNLinearCombinedEstimator(
        ke.RegressionHead(),
        model_dir=str(tmp_path / "dnn"),
        dnn_feature_columns=[x, z],
        dnn_hidden_units=[3],
        dnn_optimizer=lambda: tf.compat.v1.train.AdagradOptimizer(0.1),
    )
    ckpt = _train(dnn_only, 1)
    assert tf.train.load_variable(ckpt, "global_step") == 3
    assert "dnn/logits/bias/Adagrad" in dict(tf.train.list_variables(ckpt))


def test_default_learning_rates_are_2_15s():
    # 2.15 (facts.json): Adagrad at 0.001, Ftrl at min(0.005, 1/sqrt(n columns)).
    assert v1_dnn_linear_combined.DNN_LEARNING_RATE == 0.001
    assert v1_dnn_linear_combined.linear_learning_rate(3) == 0.005
    part = v1_optimizers.DeferredOptimizer("Ftrl", 0.005).get()
    assert isinstance(part, v1_optimizers.V1Optimizer)
    assert part.name == "Ftrl" and part.settings["learning_rate"] == 0.005


def test_two_adams_keep_2_15s_beta_power_names(tmp_path):
    # 2.15 wrote head/beta{1,2}_power for the network's Adam and
    # head/beta{1,2}_power_1 for the linear model's; after 2 steps 0.9**3, 0.999**3.
    x = tf.feature_column.numeric_column("x")
    z = tf.feature_column.numeric_column("z")
    est = v1_dnn_linear_combined.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path),
        linear_feature_columns=[x],
        dnn_feature_columns=[z],
        dnn_hidden_units=[2],
        linear_optimizer=lambda: tf.compat.v1.train.AdamOptimizer(0.01),
        dnn_optimizer=lambda: tf.compat.v1.train.AdamOptimizer(0.01),
    )
    ckpt = _train(est, 0, steps=2)
    names = {n for n, _ in tf.train.list_variables(ckpt)}
    for power, beta in (("beta1_power", 0.9), ("beta2_power", 0.999)):
        for name in (f"head/{power}", f"head/{power}_1"):
            np.testing.assert_allclose(
                tf.train.load_variable(ckpt, name), beta**3, rtol=1e-6
            )
    assert "dnn/logits/kernel/Adam_1" in names
    assert "linear/linear_model/x/weights/Adam_1" in names
    assert tf.train.load_variable(ckpt, "global_step") == 2


def test_bad_arguments_are_value_errors():
    x = tf.feature_column.numeric_column("x")
    with pytest.raises(ValueError, match="linear_feature_columns, dnn_feature_columns"):
        v1_dnn_linear_combined.DNNLinearCombinedClassifier()
    with pytest.raises(ValueError, match="dnn_hidden_units"):
        v1_dnn_linear_combined.DNNLinearCombinedClassifier(dnn_feature_columns=[x])
    with pytest.raises(TypeError, match="head"):
        v1_dnn_linear_combined.DNNLinearCombinedEstimator(
            "head", linear_feature_columns=[x]
        )
    with pytest.raises(ValueError, match="loss_reduction"):
        v1_dnn_linear_combined.DNNLinearCombinedRegressor(
            linear_feature_columns=[x], loss_reduction="sum_over_batch_size"
        )
