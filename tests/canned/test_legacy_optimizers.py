"""`tf.keras.optimizers.legacy.*` as a canned estimator's optimizer, under `install()`, against 2.15.

`tests/fixtures/tf215_legacy_optimizers/` (see
`make_tf215_legacy_optimizer_fixture.py`) holds, for each case, the model_dir
2.15's DNNRegressor wrote with `optimizer=<the case's expression>` (an
instance, or a callable returning one with a
`tf.compat.v1.train.exponential_decay` learning rate). Here the same
expression, evaluated after `keras_estimator.install()`, restores 2.15's
step 3 and trains to its step 6: same variable names, same values.
"""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.canned import legacy_optimizers

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf215_legacy_optimizers"
_SPEC = importlib.util.spec_from_file_location(
    "make_tf215_legacy_optimizer_fixture",
    Path(__file__).resolve().parents[1] / "fixtures" / "make_tf215_legacy_optimizer_fixture.py",
)
GENERATOR = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(GENERATOR)


@pytest.fixture
def installed():
    with ke.install():
        yield


def _model_dir_at(case, step, tmp_path):
    model_dir = tmp_path / case
    model_dir.mkdir()
    for suffix in (".index", ".data-00000-of-00001"):
        name = f"model.ckpt-{step}{suffix}"
        (model_dir / name).write_bytes((FIXTURES / case / "model_dir" / name).read_bytes())
    (model_dir / "checkpoint").write_text(f'model_checkpoint_path: "model.ckpt-{step}"\n')
    return model_dir


def _estimator(optimizer, model_dir):
    identity = tf.feature_column.categorical_column_with_identity("c", 4)
    return tf.estimator.DNNRegressor(
        hidden_units=[3],
        feature_columns=[
            tf.feature_column.numeric_column("x", shape=(2,)),
            tf.feature_column.embedding_column(identity, 2),
        ],
        optimizer=optimizer,
        model_dir=str(model_dir),
        config=tf.estimator.RunConfig(tf_random_seed=42),
    )


@pytest.mark.parametrize("case", sorted(GENERATOR.CASES))
def test_2_15_model_dir_trains_on_to_its_step_6(case, installed, tmp_path):
    rows = json.loads((FIXTURES / "data.json").read_text())
    optimizer = eval(GENERATOR.CASES[case], {"tf": tf})  # the text 2.15 ran
    est = _estimator(optimizer, _model_dir_at(case, GENERATOR.FIRST, tmp_path))
    est.train(GENERATOR.train_input_fn(rows), steps=GENERATOR.SECOND - GENERATOR.FIRST)
    ours = est.latest_checkpoint()
    assert ours.endswith(f"model.ckpt-{GENERATOR.SECOND}")
    theirs = str(FIXTURES / case / "model_dir" / f"model.ckpt-{GENERATOR.SECOND}")
    names = sorted(n for n, _ in tf.train.list_variables(theirs))
    assert names == sorted(n for n, _ in tf.train.list_variables(ours))
    for name in names:
        np.testing.assert_allclose(
            tf.train.load_variable(ours, name),
            tf.train.load_variable(theirs, name),
            rtol=1e-5,
            atol=1e-6,
            err_msg=name,
        )


def test_install_serves_the_legacy_names_and_uninstall_restores_keras(installed):
    for name, cls in legacy_optimizers.LEGACY_NAMES.items():
        assert getattr(tf.keras.optimizers.legacy, name) is cls


def test_without_install_keras_3_still_refuses():
    with pytest.raises(ImportError, match="not supported in Keras 3"):
        tf.keras.optimizers.legacy.Adam(0.1)


# The same cases with Keras 3 optimizers (no install()): their options were
# dropped before (amsgrad, centered, nesterov, clipping, l2 shrinkage), and
# momentum moved embedding rows a batch did not read.
KERAS_3_CASES = {
    "adagrad_named": "keras.optimizers.Adagrad(learning_rate=0.1, "
    "initial_accumulator_value=0.2, epsilon=1e-6, name='MyAdagrad')",
    "ftrl_every_setting": "keras.optimizers.Ftrl(learning_rate=0.1, learning_rate_power=-0.6, "
    "initial_accumulator_value=0.2, l1_regularization_strength=0.01, "
    "l2_regularization_strength=0.02, l2_shrinkage_regularization_strength=0.03, beta=0.1)",
    "rmsprop_centered_momentum": "keras.optimizers.RMSprop(learning_rate=0.01, rho=0.8, "
    "momentum=0.5, epsilon=1e-6, centered=True)",
    "adam_amsgrad_clipnorm": "keras.optimizers.Adam(learning_rate=0.05, amsgrad=True, "
    "clipnorm=0.5)",
    "rmsprop_schedule_clipvalue": "keras.optimizers.RMSprop(learning_rate="
    "keras.optimizers.schedules.ExponentialDecay(0.05, 2, 0.5), clipvalue=0.1)",
    "sgd_global_clipnorm": "keras.optimizers.SGD(learning_rate=0.1, global_clipnorm=0.5)",
}


@pytest.mark.parametrize("case", sorted(KERAS_3_CASES))
def test_keras_3_optimizers_with_the_same_options_train_as_2_15s_legacy_ones(case, tmp_path):
    import keras

    rows = json.loads((FIXTURES / "data.json").read_text())
    optimizer = eval(KERAS_3_CASES[case], {"keras": keras})
    identity = tf.feature_column.categorical_column_with_identity("c", 4)
    est = ke.DNNRegressor(
        hidden_units=[3],
        feature_columns=[
            tf.feature_column.numeric_column("x", shape=(2,)),
            tf.feature_column.embedding_column(identity, 2),
        ],
        optimizer=optimizer,
        model_dir=str(_model_dir_at(case, GENERATOR.FIRST, tmp_path)),
        config=ke.RunConfig(tf_random_seed=42),
    )
    est.train(GENERATOR.train_input_fn(rows), steps=GENERATOR.SECOND - GENERATOR.FIRST)
    ours = est.latest_checkpoint()
    theirs = str(FIXTURES / case / "model_dir" / f"model.ckpt-{GENERATOR.SECOND}")
    names = sorted(n for n, _ in tf.train.list_variables(theirs))
    assert names == sorted(n for n, _ in tf.train.list_variables(ours))
    for name in names:
        np.testing.assert_allclose(
            tf.train.load_variable(ours, name),
            tf.train.load_variable(theirs, name),
            rtol=1e-5,
            atol=1e-6,
            err_msg=name,
        )


def test_2_15_premade_model_dir_of_a_legacy_adam_callable_trains_on(installed, tmp_path):
    """The premade fixture 2.15 trained with `lambda: legacy.Adam(learning_rate=0.01)`."""
    from tests.canned import test_premade_fixtures as premade

    name = "dnn_classifier_vocab_weight"
    case = premade._case(name)
    spec = case["estimator"]
    assert spec["args"]["optimizer"]["class"] == "tf.keras.optimizers.legacy.Adam"
    assert spec["args"]["optimizer"]["passed_as"] == "callable returning a new instance"
    args = dict(spec["args"])
    args["feature_columns"] = [premade._column(c) for c in args["feature_columns"]]
    kwargs = args["optimizer"]["kwargs"]
    args["optimizer"] = lambda: tf.keras.optimizers.legacy.Adam(**kwargs)
    est = tf.estimator.DNNClassifier(
        model_dir=str(premade._model_dir_at(name, 10, tmp_path)),
        config=tf.estimator.RunConfig(tf_random_seed=spec["config"]["tf_random_seed"]),
        **args,
    )
    inputs = case["train_input"]
    est.train(lambda: premade._dataset(inputs, repeat=True), steps=10)
    ours = est.latest_checkpoint()
    theirs = str(premade.FIXTURES / name / "model_dir" / "model.ckpt-20")
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


def test_a_legacy_optimizer_subclass_gets_the_loss_and_variables(installed, tmp_path):
    """As tf.estimator's own canned tests' mock optimizer: get_updates(loss, params)."""
    calls = []

    class CountingOptimizer(tf.keras.optimizers.legacy.Optimizer):
        def get_updates(self, loss, params):
            calls.append((loss.shape.ndims, sorted(v.name for v in params), self.iterations))
            return [tf.compat.v1.assign_add(self.iterations, 1).op]

        def get_config(self):
            return super().get_config()

    optimizer = CountingOptimizer(name="my_optimizer")
    assert optimizer.get_config() == {"name": "my_optimizer"}
    x = tf.feature_column.numeric_column("x")
    est = tf.estimator.DNNRegressor([2], [x], optimizer=optimizer, model_dir=str(tmp_path))
    data = {"x": np.arange(8, dtype=np.float32)}
    labels = np.arange(8, dtype=np.float32)
    est.train(
        lambda: tf.data.Dataset.from_tensor_slices((data, labels)).batch(4).repeat(), steps=3
    )
    assert est.get_variable_value("global_step") == 3
    assert calls, "get_updates was not called"
    ndims, names, iterations = calls[0]
    assert ndims == 0
    assert names == [
        "dnn/hiddenlayer_0/bias:0",
        "dnn/hiddenlayer_0/kernel:0",
        "dnn/logits/bias:0",
        "dnn/logits/kernel:0",
    ]
    assert iterations.name.startswith("global_step")
    assert not [n for n in est.get_variable_names() if n.startswith("training/")]


def test_a_subclass_without_get_updates_is_named(installed, tmp_path):
    class Bare(tf.keras.optimizers.legacy.Optimizer):
        pass

    x = tf.feature_column.numeric_column("x")
    est = tf.estimator.DNNRegressor([2], [x], optimizer=Bare(name="bare"), model_dir=str(tmp_path))
    with pytest.raises(NotImplementedError, match="Bare subclasses tf.keras.optimizers.legacy"):
        est.train(
            lambda: tf.data.Dataset.from_tensor_slices(({"x": [[1.0]]}, [[1.0]])).repeat(), steps=1
        )


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: legacy_optimizers.Adam(foo=1), TypeError, "Unexpected keyword argument"),
        (lambda: legacy_optimizers.SGD(momentum=2.0), ValueError, "`momentum` must be between"),
        (lambda: legacy_optimizers.Adam(clipnorm=-1.0), ValueError, "Expected clipnorm >= 0"),
        (
            lambda: legacy_optimizers.Adam(clipnorm=1.0, global_clipnorm=1.0),
            ValueError,
            "Cannot accept both `clipnorm` and `global_clipnorm`",
        ),
        (
            lambda: legacy_optimizers.Ftrl(learning_rate_power=0.5),
            ValueError,
            "learning_rate_power must be less than or equal to 0",
        ),
    ],
)
def test_bad_legacy_arguments_raise_tf_keras_2s_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_a_callable_returning_a_keras_3_optimizer_trains_as_the_instance(tmp_path):
    """Called where the step is built (as 2.15 did), its own variables are not saved."""
    import keras

    x = tf.feature_column.numeric_column("x")
    data = {"x": np.arange(8, dtype=np.float32)[:, None]}
    labels = np.arange(8, dtype=np.float32)

    def trained(optimizer, name):
        est = ke.DNNRegressor(
            [2], [x], optimizer=optimizer, model_dir=str(tmp_path / name),
            config=ke.RunConfig(tf_random_seed=1),
        )
        for _ in range(2):  # a second train() call restores and rebuilds the step
            est.train(
                lambda: tf.data.Dataset.from_tensor_slices((data, labels)).batch(4).repeat(),
                steps=2,
            )
        checkpoint = est.latest_checkpoint()
        return {n: tf.train.load_variable(checkpoint, n) for n, _ in tf.train.list_variables(checkpoint)}

    from_callable = trained(lambda: keras.optimizers.Adam(0.01), "callable")
    from_instance = trained(keras.optimizers.Adam(0.01), "instance")
    assert sorted(from_callable) == sorted(from_instance)
    assert not [n for n in from_callable if n.startswith("adam")]
    assert from_callable["global_step"] == 4
    for name, value in from_instance.items():
        np.testing.assert_allclose(from_callable[name], value, rtol=1e-6, err_msg=name)


def test_linear_and_wide_and_deep_call_a_legacy_subclass_and_a_head_takes_a_legacy_adam(
    installed, tmp_path
):
    seen = []

    class Recording(tf.keras.optimizers.legacy.Optimizer):
        def get_updates(self, loss, params):
            seen.append((self.name, sorted(v.name for v in params), self.iterations))
            return [tf.compat.v1.assign_add(self.iterations, 1).op]

    x = tf.feature_column.numeric_column("x")
    z = tf.feature_column.numeric_column("z")
    data = {"x": np.arange(8, dtype=np.float32), "z": np.ones(8, np.float32)}
    labels = (np.arange(8) > 3).astype(np.int64)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((data, labels)).batch(4).repeat()

    linear = tf.estimator.LinearClassifier(
        [x], optimizer=Recording(name="lin"), model_dir=str(tmp_path / "linear")
    )
    linear.train(input_fn, steps=2)
    assert linear.get_variable_value("global_step") == 2
    combined = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path / "combined"),
        linear_feature_columns=[x],
        linear_optimizer=Recording(name="wide"),
        dnn_feature_columns=[z],
        dnn_hidden_units=[2],
        dnn_optimizer=Recording(name="deep"),
    )
    combined.train(input_fn, steps=2)
    assert combined.get_variable_value("global_step") == 2
    by_name = {name: (params, iterations) for name, params, iterations in seen}
    assert by_name["lin"][0] == [
        "linear/linear_model/bias_weights:0",
        "linear/linear_model/x/weights:0",
    ]
    assert by_name["deep"][1].name.startswith("global_step")
    # 2.15 gave only the network's optimizer the global step; the other counts its own.
    assert by_name["wide"][1].name.startswith("training/wide/iter")
    assert by_name["wide"][0] == [
        "linear/linear_model/bias_weights:0",
        "linear/linear_model/x/weights:0",
    ]
    assert combined.get_variable_value("training/wide/iter") == 2

    def model_fn(features, labels, mode):
        logits = tf.compat.v1.layers.dense(features["x"][:, None], 1, name="out")
        return ke.BinaryClassHead().create_estimator_spec(
            features,
            mode,
            logits,
            labels=labels,
            optimizer=tf.keras.optimizers.legacy.Adam(0.1),
            trainable_variables=tf.compat.v1.trainable_variables(),
        )

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "head"))
    est.train(input_fn, steps=3)
    assert est.get_variable_value("global_step") == 3
    assert "training/Adam/out/kernel/m" in est.get_variable_names()


def test_a_learning_rate_of_0_warm_starts_and_trains_nothing(installed, tmp_path):
    # 2.15's own warm-start tests (dnn_testing_utils, linear_testing_utils)
    # warm-start from a trained model_dir with
    # tf.keras.optimizers.legacy.SGD(learning_rate=0.0) and expect, after a
    # step, every variable equal to the first model's and learning_rate 0.0.
    # It was refused: "learning_rate must be positive, got 0.0".
    x = np.arange(8, dtype=np.float32).reshape(4, 2)

    def input_fn():
        features = {"x": x, "c": np.array([0, 1, 2, 3], np.int64)}
        return tf.data.Dataset.from_tensor_slices((features, np.ones((4, 1), np.float32))).batch(4)

    first = _estimator("SGD", tmp_path / "first")
    first.train(input_fn, max_steps=1)
    second = tf.estimator.DNNRegressor(
        hidden_units=[3],
        feature_columns=[
            tf.feature_column.numeric_column("x", shape=(2,)),
            tf.feature_column.embedding_column(
                tf.feature_column.categorical_column_with_identity("c", 4), 2
            ),
        ],
        optimizer=tf.keras.optimizers.legacy.SGD(learning_rate=0.0),
        warm_start_from=first.model_dir,
        model_dir=str(tmp_path / "second"),
    )
    second.train(input_fn, max_steps=1)
    for name in second.get_variable_names():
        if "learning_rate" in name:
            assert second.get_variable_value(name) == 0.0
        elif name != "global_step":
            np.testing.assert_array_equal(
                second.get_variable_value(name), first.get_variable_value(name), err_msg=name
            )


def test_legacy_optimizer_objects_name_the_step_counters_they_trained_with(installed, tmp_path):
    # 2.15's test_train_op_calls_both_dnn_and_linear: after train(), each
    # legacy optimizer object's `iterations` is the variable it counted in
    # (measured in the reference venv: 'global_step:0' for the network's,
    # 'training/SGD_1/iter:0' for the linear part's), both at 1 after a step.
    # Both were left None.
    dnn_opt = tf.keras.optimizers.legacy.SGD(1.0)
    linear_opt = tf.keras.optimizers.legacy.SGD(1.0)
    x = tf.feature_column.numeric_column("x")

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(
            ({"x": np.array([[0.0], [1.0]], np.float32)}, np.array([[0], [1]]))
        ).batch(1)

    est = tf.estimator.DNNLinearCombinedClassifier(
        linear_feature_columns=[x],
        linear_optimizer=linear_opt,
        dnn_hidden_units=(2, 2),
        dnn_feature_columns=[x],
        dnn_optimizer=dnn_opt,
        model_dir=str(tmp_path),
    )
    est.train(input_fn, steps=1)
    assert dnn_opt.iterations.name == "global_step:0"
    assert linear_opt.iterations.name == "training/SGD_1/iter:0"
    assert est.get_variable_value(linear_opt.iterations.name) == 1
    assert est.get_variable_value(dnn_opt.iterations.name) == 1
