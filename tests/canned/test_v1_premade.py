"""The `tf.compat.v1.estimator` premade classes against tf.estimator 2.15.

The v1 fixtures (`tests/fixtures/tf215_premade/v1_*`, written by 2.15's
`tf.compat.v1.estimator.DNNClassifier` / `LinearClassifier`) restore here to
2.15's predictions and metrics, and training from 2.15's step 10 on its
batches reproduces its step 20, v1 slots included. The constructors take
2.15's v1 signatures (`tf_estimator_2_15_api.tsv`).
"""

import ast
import inspect
import json
import re
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.canned import v1_estimators, v1_optimizers
from tests.canned.test_premade_fixtures import (
    FIXTURES,
    _case,
    _column,
    _dataset,
    _model_dir_at,
)

V1_CASES = ["v1_dnn_classifier", "v1_linear_classifier"]
V1_CLASSES = [
    "DNNClassifier",
    "DNNRegressor",
    "DNNEstimator",
    "LinearClassifier",
    "LinearRegressor",
    "LinearEstimator",
    "BaselineClassifier",
    "BaselineRegressor",
    "BaselineEstimator",
]
API_TABLE = Path("/work/shared/reference/tf_estimator_2_15_api.tsv")
if not API_TABLE.exists():
    API_TABLE = Path(__file__).resolve().parents[3] / "shared/reference/tf_estimator_2_15_api.tsv"


def _estimator(case, model_dir):
    spec = case["estimator"]
    assert spec["namespace"] == "tf.compat.v1.estimator"
    args = dict(spec["args"])
    args["feature_columns"] = [_column(c) for c in args["feature_columns"]]
    config = ke.RunConfig(tf_random_seed=spec["config"]["tf_random_seed"])
    return getattr(v1_estimators, spec["class"])(model_dir=str(model_dir), config=config, **args)


@pytest.mark.parametrize("name", V1_CASES)
def test_2_15_v1_model_dirs_restore_to_its_predictions_and_metrics(name, tmp_path):
    case = _case(name)
    est = _estimator(case, _model_dir_at(name, 20, tmp_path))
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
        np.testing.assert_allclose(metrics[key], value, rtol=1e-4, atol=1e-5, err_msg=key)


@pytest.mark.parametrize("name", V1_CASES)
def test_training_from_2_15s_v1_step_10_reproduces_its_step_20(name, tmp_path):
    case = _case(name)
    est = _estimator(case, _model_dir_at(name, 10, tmp_path))
    inputs = case["train_input"]
    assert inputs["batches_per_epoch"] == 5
    est.train(lambda: _dataset(inputs, repeat=True), steps=10)
    ours = est.latest_checkpoint()
    theirs = str(FIXTURES / name / "model_dir" / "model.ckpt-20")
    names = sorted(n for n, _ in tf.train.list_variables(theirs))
    assert names == sorted(n for n, _ in tf.train.list_variables(ours))
    for variable in names:
        np.testing.assert_allclose(
            tf.train.load_variable(ours, variable),
            tf.train.load_variable(theirs, variable),
            rtol=1e-5,
            atol=1e-6,
            err_msg=variable,
        )


def _table_signature(symbol):
    for line in API_TABLE.read_text().splitlines():
        fields = line.split("\t")
        if fields[0] == symbol:
            return fields[2]
    raise AssertionError(f"{symbol} is not in {API_TABLE}")


def _parameters(signature):
    """(name, default) pairs of a signature string; functions by their name."""
    text = re.sub(r"<function (\w+) at 0x[0-9a-f]+>", r"'<function \1>'", signature)
    call = ast.parse(f"f{text}", mode="eval").body
    assert isinstance(call, ast.Call)
    pairs = [(arg.id, inspect.Parameter.empty) for arg in call.args]
    pairs += [(kw.arg, ast.literal_eval(kw.value)) for kw in call.keywords]
    return pairs


def _default(value):
    if value is not inspect.Parameter.empty and callable(value):
        return f"<function {value.__name__}>"
    return value


@pytest.mark.skipif(not API_TABLE.exists(), reason="2.15 API table not available")
@pytest.mark.parametrize("name", V1_CLASSES)
def test_v1_signatures_match_2_15(name):
    expected = _parameters(_table_signature(f"tf.compat.v1.estimator.{name}"))
    parameters = list(inspect.signature(getattr(v1_estimators, name)).parameters.values())
    ours = [(p.name, _default(p.default)) for p in parameters]
    assert ours == expected


def _wine_like(rows=32):
    rng = np.random.RandomState(0)
    x = rng.normal(size=(rows, 2)).astype(np.float32)
    labels = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.int64)
    return {"a": x[:, 0], "b": x[:, 1]}, labels


def _input(repeat=True):
    features, labels = _wine_like()
    data = tf.data.Dataset.from_tensor_slices((features, labels)).batch(8)
    return data.repeat() if repeat else data


COLUMNS = [tf.feature_column.numeric_column("a"), tf.feature_column.numeric_column("b")]


def test_a_proximal_adagrad_instance_trains_with_2_15s_slot_names(tmp_path):
    est = v1_estimators.DNNClassifier(
        hidden_units=[4],
        feature_columns=COLUMNS,
        model_dir=str(tmp_path),
        optimizer=tf.compat.v1.train.ProximalAdagradOptimizer(
            learning_rate=0.1, l1_regularization_strength=0.001
        ),
        config=ke.RunConfig(tf_random_seed=1),
    )
    before = est.evaluate(lambda: _input(repeat=False))["loss"]
    est.train(_input, steps=60)
    after = est.evaluate(lambda: _input(repeat=False))
    assert after["global_step"] == 60
    assert after["loss"] < before
    names = {n for n, _ in tf.train.list_variables(est.latest_checkpoint())}
    assert "dnn/logits/kernel/t_0/ProximalAdagrad" in names
    assert not any(n.startswith("training/") for n in names)


@pytest.mark.parametrize(
    ("make", "optimizer", "slots"),
    [
        (
            lambda d, o: v1_estimators.LinearClassifier(COLUMNS, model_dir=d, optimizer=o),
            "Adam",
            {
                "linear/head/beta1_power",
                "linear/head/beta2_power",
                "linear/linear_model/a/weights/part_0/Adam",
                "linear/linear_model/a/weights/part_0/Adam_1",
            },
        ),
        (
            lambda d, o: v1_estimators.BaselineClassifier(model_dir=d, optimizer=o),
            lambda: tf.compat.v1.train.RMSPropOptimizer(0.01, momentum=0.5),
            {"baseline/bias/RMSProp", "baseline/bias/RMSProp_1"},
        ),
        (
            lambda d, o: v1_estimators.DNNRegressor([3], COLUMNS, model_dir=d, optimizer=o),
            tf.compat.v1.train.MomentumOptimizer(0.01, 0.9),
            {"dnn/hiddenlayer_0/kernel/t_0/Momentum", "dnn/logits/bias/t_0/Momentum"},
        ),
        (
            # As 2.15's docstrings show it: called in model_fn, reading the global step.
            lambda d, o: v1_estimators.DNNClassifier([3], COLUMNS, model_dir=d, optimizer=o),
            lambda: tf.compat.v1.train.AdamOptimizer(
                learning_rate=tf.compat.v1.train.exponential_decay(
                    0.1, tf.compat.v1.train.get_global_step(), 10, 0.96
                )
            ),
            {"dnn/head/beta1_power", "dnn/logits/kernel/t_0/Adam_1"},
        ),
    ],
)
def test_optimizers_by_name_instance_or_callable_keep_2_15s_slot_names(
    make, optimizer, slots, tmp_path
):
    est = make(str(tmp_path), optimizer)
    est.train(_input, steps=3)
    names = {n for n, _ in tf.train.list_variables(est.latest_checkpoint())}
    assert slots <= names


def test_default_optimizers_are_2_15s():
    cases = {
        "DNNClassifier": ([2], COLUMNS),
        "LinearRegressor": (COLUMNS,),
        "BaselineClassifier": (),
    }
    rates = {}
    for name, args in cases.items():
        default = inspect.signature(getattr(v1_estimators, name)).parameters["optimizer"].default
        optimizer = v1_optimizers.get_v1_optimizer(
            default,
            {
                "DNNClassifier": v1_estimators.DNN_LEARNING_RATE,
                "LinearRegressor": v1_estimators.LINEAR_LEARNING_RATE,
                "BaselineClassifier": v1_estimators.BASELINE_LEARNING_RATE,
            }[name],
        )
        rates[name] = (optimizer.name, optimizer.settings["learning_rate"])
        getattr(v1_estimators, name)(*args)  # builds
    facts = json.loads((FIXTURES / "facts.json").read_text())["classes"]
    for name, (optimizer, rate) in rates.items():
        built = facts[f"v1.{name}"]["optimizers_built"][0]
        assert built["config"]["name"] == optimizer
        assert built["learning_rate"] == pytest.approx(rate)


def test_a_bad_optimizer_name_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match=r"'adagrad'.*Adagrad"):
        v1_estimators.DNNClassifier([2], COLUMNS, optimizer="adagrad")
    with pytest.raises(ValueError, match=r"'Nesterov'"):
        v1_estimators.LinearClassifier(COLUMNS, optimizer="Nesterov")


def test_an_object_that_is_no_v1_optimizer_is_a_value_error():
    with pytest.raises(ValueError, match=r"tf\.compat\.v1\.train\.Optimizer.*int"):
        v1_estimators.BaselineRegressor(optimizer=3)


def test_a_v2_loss_reduction_is_rejected_as_2_15_rejected_it():
    with pytest.raises(ValueError, match=r"'sum_over_batch_size'"):
        v1_estimators.DNNRegressor([2], COLUMNS, loss_reduction="sum_over_batch_size")
    est = v1_estimators.LinearRegressor(
        COLUMNS, loss_reduction=tf.compat.v1.losses.Reduction.SUM_OVER_BATCH_SIZE
    )
    assert isinstance(est, ke.Estimator)
