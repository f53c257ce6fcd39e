"""The `tf.compat.v1.estimator` premade classes against tf.estimator 2.15.

The v1 fixtures (`tests/fixtures/tf215_premade/v1_*`) are restored, trained
on and exported in `test_premade_fixtures.py`, and the signatures are checked
in `tests/integration/test_api_parity.py`; here: v1 optimizers by name,
instance and callable with 2.15's slot names, defaults, and bad arguments.
"""

import inspect
import json

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.canned import (
    v1_dnn_linear_combined,
    v1_estimators,
    v1_optimizers,
)
from tests.canned.test_premade_fixtures import (
    FIXTURES,
)


def _default(value):
    if value is not inspect.Parameter.empty and callable(value):
        return f"<function {value.__name__}>"
    return value


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


class _BareOptimizer(tf.compat.v1.train.Optimizer):
    """A v1 optimizer subclass that implements no update."""

    def __init__(self):
        super().__init__(use_locking=False, name="Bare")


_V1_MAKERS = {
    "DNNClassifier": lambda d, o: v1_estimators.DNNClassifier(
        [2], COLUMNS, model_dir=d, optimizer=o
    ),
    "LinearClassifier": lambda d, o: v1_estimators.LinearClassifier(
        COLUMNS, model_dir=d, optimizer=o
    ),
    "BaselineClassifier": lambda d, o: v1_estimators.BaselineClassifier(
        model_dir=d, optimizer=o
    ),
    "DNNLinearCombinedClassifier": lambda d, o: (
        v1_dnn_linear_combined.DNNLinearCombinedClassifier(
            model_dir=d,
            linear_feature_columns=COLUMNS,
            linear_optimizer=o,
            dnn_feature_columns=COLUMNS,
            dnn_hidden_units=[2],
        )
    ),
}


# What tf.compat.v1.estimator's classes (2.15) raised, for each of the four
# classes alike, at the first train(), the estimator being made without error.
_BAD_OPTIMIZERS = {
    "unknown_name": (
        "Foo",
        ValueError,
        "Unsupported optimizer name: Foo. Supported names are: "
        "('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD')",
    ),
    "lower_case_name": (
        "adagrad",
        ValueError,
        "Unsupported optimizer name: adagrad. Supported names are: ",
    ),
    "an_int": (3, ValueError, "The given object is not an Optimizer instance. Given: 3"),
    "a_callable_returning_an_int": (
        lambda: 3,
        ValueError,
        "The given object is not an Optimizer instance. Given: 3",
    ),
    # 2.15: NotImplementedError, raised by the optimizer's
    # _resource_apply_dense (then re-raised by its head with a message of
    # its own, naming _Head).
    "a_bare_v1_optimizer_subclass": (
        _BareOptimizer(),
        NotImplementedError,
        "Subclasses of tf.compat.v1.train.Optimizer must implement",
    ),
    "a_callable_returning_one": (
        _BareOptimizer,
        NotImplementedError,
        "Subclasses of tf.compat.v1.train.Optimizer must implement",
    ),
}


@pytest.mark.parametrize("case", sorted(_BAD_OPTIMIZERS))
@pytest.mark.parametrize("estimator", sorted(_V1_MAKERS))
def test_a_bad_optimizer_raises_2_15s_error_at_the_first_train(estimator, case, tmp_path):
    optimizer, error, phrase = _BAD_OPTIMIZERS[case]
    est = _V1_MAKERS[estimator](str(tmp_path), optimizer)  # made, as in 2.15
    with pytest.raises(error) as raised:
        est.train(_input, steps=1)
    assert type(raised.value) is error
    assert str(raised.value).startswith(phrase), str(raised.value)


def test_a_v2_loss_reduction_is_rejected_as_2_15_rejected_it():
    with pytest.raises(ValueError, match=r"^Invalid loss_reduction: sum_over_batch_size\."):
        v1_estimators.DNNRegressor([2], COLUMNS, loss_reduction="sum_over_batch_size")
    est = v1_estimators.LinearRegressor(
        COLUMNS, loss_reduction=tf.compat.v1.losses.Reduction.SUM_OVER_BATCH_SIZE
    )
    assert isinstance(est, ke.Estimator)
