"""Estimators under tf.distribute strategies on logical CPU devices (conftest
makes two), checked against single-device training."""

import tempfile

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from tests._models import make_data, mlp_model_fn

X, Y = make_data(num_examples=96)
DEVICES = ["/cpu:0", "/cpu:1"]
# One strategy for the module: strategies made one after another in a process
# share collective instance keys, and TensorFlow then mixes up their ops.
MIRRORED = tf.distribute.MirroredStrategy(DEVICES)


def _input_fn(batch_size, seen=None):
    def input_fn(input_context=None):
        if seen is not None:
            seen.append(input_context)
        data = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
        return data.batch(batch_size).repeat()

    return input_fn


class GlobalSteps(ke.SessionRunHook):
    """Fetches the global step at every run it sees."""

    def __init__(self):
        self.steps = []

    def before_run(self, run_context):
        return ke.SessionRunArgs("global_step")

    def after_run(self, run_context, run_values):
        self.steps.append(int(run_values.results))


def _estimator(strategy, params, seed=1):
    config = ke.RunConfig(tf_random_seed=seed, train_distribute=strategy)
    return ke.Estimator(mlp_model_fn, tempfile.mkdtemp(), config, params)


@given(
    optimizer=st.sampled_from(["sgd", "adam", "adagrad"]),
    global_batch=st.sampled_from([4, 8, 16]),
    hidden=st.lists(st.integers(2, 8), min_size=1, max_size=2),
    steps=st.integers(1, 12),
    seed=st.integers(0, 100),
)
def test_mirrored_training_equals_single_device_at_the_same_global_batch(
    optimizer, global_batch, hidden, steps, seed
):
    params = {"hidden": hidden, "optimizer": optimizer, "learning_rate": 0.05}
    mirrored = _estimator(MIRRORED, params, seed)
    # Each element is one replica's batch: two replicas make the global batch.
    mirrored.train(_input_fn(global_batch // 2), steps=steps)
    single = _estimator(None, params, seed)
    single.train(_input_fn(global_batch), steps=steps)
    names = single.get_variable_names()
    assert mirrored.get_variable_names() == names
    for name in names:
        np.testing.assert_allclose(
            mirrored.get_variable_value(name),
            single.get_variable_value(name),
            rtol=1e-5,
            atol=1e-6,
            err_msg=name,
        )


def test_mirrored_evaluate_and_predict_match_single_device():
    params = {"hidden": [6], "optimizer": "adam"}
    mirrored = _estimator(MIRRORED, params)
    single = _estimator(None, params)
    mirrored.train(_input_fn(8), steps=20)
    single.train(_input_fn(16), steps=20)

    def eval_input_fn(batch_size):
        return lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(batch_size)

    ours = mirrored.evaluate(eval_input_fn(8))
    theirs = single.evaluate(eval_input_fn(16))
    assert ours["global_step"] == theirs["global_step"] == 20
    assert ours["accuracy"] == pytest.approx(theirs["accuracy"])
    assert ours["loss"] == pytest.approx(theirs["loss"], rel=1e-5)

    def predict_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": X}).batch(10)

    predicted = np.stack([p["logits"] for p in mirrored.predict(predict_input_fn)])
    expected = np.stack([p["logits"] for p in single.predict(predict_input_fn)])
    assert predicted.shape == (len(X), 3)
    np.testing.assert_allclose(predicted, expected, rtol=1e-5, atol=1e-5)


def test_input_fn_gets_an_input_context_once_per_pipeline():
    seen = []
    estimator = _estimator(MIRRORED, {"hidden": [4]})
    estimator.train(_input_fn(8, seen), steps=3)
    assert len(seen) == 1
    context = seen[0]
    assert isinstance(context, tf.distribute.InputContext)
    assert context.num_replicas_in_sync == 2
    assert context.get_per_replica_batch_size(16) == 8


def test_mirrored_training_resumes_from_its_checkpoint():
    params = {"hidden": [4], "optimizer": "adam"}
    strategy = MIRRORED
    first = _estimator(strategy, params)
    first.train(_input_fn(8), steps=4)
    config = ke.RunConfig(tf_random_seed=1, train_distribute=strategy)
    second = ke.Estimator(mlp_model_fn, first.model_dir, config, params)
    second.train(_input_fn(8), steps=3)
    assert int(second.get_variable_value("global_step")) == 7

    # The same two calls without a strategy (each call restarts the input).
    single = _estimator(None, params)
    single.train(_input_fn(16), steps=4)
    single = ke.Estimator(mlp_model_fn, single.model_dir, single.config, params)
    single.train(_input_fn(16), steps=3)
    np.testing.assert_allclose(
        second.get_variable_value("dense/kernel"),
        single.get_variable_value("dense/kernel"),
        rtol=1e-5,
        atol=1e-6,
    )


def test_one_device_strategy_trains_like_no_strategy():
    params = {"hidden": [4], "optimizer": "sgd"}
    one = _estimator(tf.distribute.OneDeviceStrategy("/cpu:1"), params)
    one.train(_input_fn(16), steps=5)
    plain = _estimator(None, params)
    plain.train(_input_fn(16), steps=5)
    np.testing.assert_allclose(
        one.get_variable_value("dense/kernel"), plain.get_variable_value("dense/kernel"),
        rtol=1e-6,
    )


def test_mirrored_step_fusion_with_hooks_matches_step_by_step():
    """Keras 3 fit fails with MirroredStrategy and steps_per_execution > 1;
    fused runs here must give what one-step runs give."""

    params = {"hidden": [4], "optimizer": "adam"}
    strategy = MIRRORED
    fused = _estimator(strategy, params)
    fused.train(_input_fn(8), steps=25)  # default hooks: fused runs between logs
    stepwise = _estimator(strategy, params)
    hook = GlobalSteps()
    stepwise.train(_input_fn(8), steps=25, hooks=[hook])
    assert hook.steps == list(range(0, 25))  # the step each run ran at
    np.testing.assert_array_equal(
        fused.get_variable_value("dense/kernel"),
        stepwise.get_variable_value("dense/kernel"),
    )


def test_model_to_estimator_under_mirrored_strategy_matches_single_device():
    import keras

    keras.utils.set_random_seed(4)
    inputs = keras.Input((4,), name="x")
    hidden = keras.layers.Dense(8, activation="relu")(inputs)
    model = keras.Model(inputs, keras.layers.Dense(3)(hidden))
    model.compile(
        optimizer=keras.optimizers.Adam(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        jit_compile=False,
    )

    def train(strategy, batch_size):
        config = ke.RunConfig(train_distribute=strategy)
        estimator = ke.model_to_estimator(model, model_dir=tempfile.mkdtemp(), config=config)
        estimator.train(_input_fn(batch_size), steps=8)
        results = estimator.evaluate(
            lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(batch_size)
        )
        return estimator, results

    mirrored, mirrored_results = train(MIRRORED, 8)
    single, single_results = train(None, 16)
    assert mirrored_results["loss"] == pytest.approx(single_results["loss"], rel=1e-5)
    assert mirrored_results["accuracy"] == pytest.approx(single_results["accuracy"])
    for name in single.get_variable_names():
        np.testing.assert_allclose(
            mirrored.get_variable_value(name),
            single.get_variable_value(name),
            rtol=1e-5,
            atol=1e-6,
            err_msg=name,
        )


def test_mirrored_loops_of_fixed_length_fetch_from_each_loops_last_step():
    """`steps_per_loop` (TPUEstimator's iterations_per_loop) under a strategy:
    a fetching hook sees the last step of every loop, weights are unchanged."""

    params = {"hidden": [4], "optimizer": "adam"}
    config = ke.RunConfig(tf_random_seed=1, train_distribute=MIRRORED, steps_per_loop=6)
    looped = ke.Estimator(mlp_model_fn, tempfile.mkdtemp(), config, params)
    hook = GlobalSteps()
    looped.train(_input_fn(8), steps=15, hooks=[hook])
    assert hook.steps == [5, 11, 14]  # the steps the loops' last steps ran at
    plain = _estimator(MIRRORED, params)
    plain.train(_input_fn(8), steps=15)
    for name in plain.get_variable_names():
        np.testing.assert_array_equal(
            looped.get_variable_value(name), plain.get_variable_value(name), name
        )


def test_one_replica_mirrored_reads_like_no_strategy_and_stops_at_input_end():
    """One replica reads its input without a multi-device iterator; training,
    the end of a finite input and evaluation are those of no strategy."""
    params = {"hidden": [4], "optimizer": "adam"}
    contexts = []

    def finite_input_fn(input_context=None):
        contexts.append(input_context)
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16)  # 6 batches

    one = _estimator(tf.distribute.MirroredStrategy(["/cpu:0"]), params)
    one.train(finite_input_fn, steps=100)
    plain = _estimator(None, params)
    plain.train(finite_input_fn, steps=100)
    assert one.get_variable_value("global_step") == 6
    assert plain.get_variable_value("global_step") == 6
    assert contexts[0].num_input_pipelines == 1
    assert contexts[0].num_replicas_in_sync == 1
    for name in plain.get_variable_names():
        np.testing.assert_allclose(
            one.get_variable_value(name), plain.get_variable_value(name), rtol=1e-6,
            err_msg=name,
        )
    assert one.evaluate(finite_input_fn) == pytest.approx(plain.evaluate(finite_input_fn))


def _tutorial_model_fn(features, labels, mode):
    """The custom-estimator tutorial's shape: metrics made in every mode."""
    logits = ke.compat.layers.dense(features["x"], 3, name="logits")
    classes = tf.argmax(logits, 1)
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"classes": classes})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    accuracy = tf.compat.v1.metrics.accuracy(labels, classes, name="acc_op")
    mean_loss = tf.compat.v1.metrics.mean(loss)
    tf.compat.v1.summary.scalar("accuracy", accuracy[1])
    metrics = {"accuracy": accuracy, "mean_loss": mean_loss}
    if mode == ke.ModeKeys.EVAL:
        return ke.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_v1_metrics_made_in_training_too_evaluate_under_mirrored_as_on_one_device():
    model_dir = tempfile.mkdtemp()
    config = ke.RunConfig(tf_random_seed=3, train_distribute=MIRRORED)
    mirrored = ke.Estimator(_tutorial_model_fn, model_dir, config)
    mirrored.train(_input_fn(8), steps=6)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16)

    ours = mirrored.evaluate(eval_input_fn)
    single = ke.Estimator(_tutorial_model_fn, model_dir).evaluate(eval_input_fn)
    assert ours["global_step"] == single["global_step"] == 6
    assert ours["accuracy"] == pytest.approx(single["accuracy"])
    assert ours["mean_loss"] == pytest.approx(single["mean_loss"], rel=1e-5)


@pytest.mark.parametrize("elements", [3, 5])
def test_batches_of_static_size_train_as_batches_of_unknown_size(elements):
    """An input whose batches have a static size, running out for one replica.

    Under two replicas the last step of an input of an odd number of elements
    gives one replica an empty batch. Batches made by `from_tensors` have a
    static size (2), those of `batch(2)` an unknown one; the same elements
    must train to the same weights either way (the static size crashed
    the step with "Incompatible shapes: [2,1] vs. [0,2]").
    """
    params = {"hidden": [4], "optimizer": "adam", "learning_rate": 0.05}
    x, y = X[:2], Y[:2]

    def static_input_fn():
        return tf.data.Dataset.from_tensors(({"x": x}, y)).repeat(elements)

    def unknown_input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(2)
        return data.repeat(elements)

    results = []
    for input_fn in (static_input_fn, unknown_input_fn):
        assert (input_fn().element_spec[1].shape[0] == 2) == (input_fn is static_input_fn)
        est = _estimator(MIRRORED, params)
        est.train(input_fn, steps=(elements + 1) // 2)
        results.append({n: est.get_variable_value(n) for n in est.get_variable_names()})
    assert int(results[0]["global_step"]) == (elements + 1) // 2
    assert results[0].keys() == results[1].keys()
    for name in results[0]:
        np.testing.assert_array_equal(results[0][name], results[1][name], err_msg=name)


def test_the_replicas_share_a_mutable_table_the_model_fn_makes(tmp_path):
    # Two replicas, each inserting its half of the batch: one table of 4
    # keys, saved under 2.15's keys.
    from tests.estimator.test_mutable_tables_in_model_fn import model_fn_with

    est = ke.Estimator(
        model_fn_with([]), str(tmp_path), config=ke.RunConfig(train_distribute=MIRRORED)
    )

    def four_keys():
        features = {"k": np.array([[1], [2], [3], [4]], np.int64)}
        return tf.data.Dataset.from_tensor_slices((features, np.zeros(4, np.float32))).batch(4)

    est.train(four_keys, steps=1)
    stored = dict(tf.train.list_variables(est.latest_checkpoint()))
    assert stored["seen-keys"] == [4]
