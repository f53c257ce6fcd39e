"""Object-based checkpoints (`Scaffold(saver=tf.train.Checkpoint(...))`) and
`tf.group` of a Keras 3 optimizer's `apply_gradients` in a model_fn."""

import logging
import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator
from keras_estimator import EstimatorSpec, ModeKeys
from keras_estimator._src.checkpoint import checkpoints as _checkpoint

X = np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(8, 1)
Y = np.concatenate([3.0 * X, -2.0 * X + 1.0], axis=1)


def constant_input():
    # The same batch every step: training 10 + 5 steps across a restore
    # equals 15 steps in one go only if all optimizer state was restored.
    return tf.data.Dataset.from_tensors(({"x": X}, Y)).repeat()


def make_model_fn(units=(2,), track_step=True, track_optimizer=True, extra=False):
    """TensorFlow's guide model_fn: Keras layers and optimizer, a Checkpoint saver."""

    def model_fn(features, labels, mode):
        net = keras.Sequential([keras.layers.Dense(u) for u in units[:-1]] + [
            keras.layers.Dense(units[-1], name="out")
        ])
        opt = keras.optimizers.Adam(0.05)
        objects = {"net": net}
        if track_step:
            objects["step"] = tf.compat.v1.train.get_global_step()
        if track_optimizer:
            objects["optimizer"] = opt
        ckpt = tf.train.Checkpoint(**objects)
        output = net(features["x"])
        if extra:
            scale = tf.compat.v1.get_variable("scale", initializer=1.0)
            output = output * scale
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(
                mode,
                predictions={"y": output},
                scaffold=tf.compat.v1.train.Scaffold(saver=ckpt),
            )
        loss = tf.reduce_mean(tf.square(output - labels))
        # `scale` (when made) is updated by no optimizer that could track it.
        variables = net.trainable_variables
        gradients = tf.compat.v1.gradients(loss, variables)
        train_op = tf.group(
            opt.apply_gradients(zip(gradients, variables, strict=True)),
            tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1),
        )
        return EstimatorSpec(
            mode,
            loss=loss,
            train_op=train_op,
            scaffold=tf.compat.v1.train.Scaffold(saver=ckpt),
        )

    return model_fn


def trained_values(estimator):
    return {
        name: estimator.get_variable_value(name)
        for name in ("sequential/out/kernel", "sequential/out/bias")
    }


def test_checkpoints_are_object_based_and_read_back_by_tf_train_checkpoint(tmp_path):
    estimator = keras_estimator.Estimator(make_model_fn(), str(tmp_path))
    estimator.train(constant_input, steps=10)

    latest = tf.train.latest_checkpoint(str(tmp_path))
    assert os.path.basename(latest) == "model.ckpt-10"
    keys = [name for name, _ in tf.train.list_variables(latest)]
    assert "_CHECKPOINTABLE_OBJECT_GRAPH" in keys
    assert all(k == "_CHECKPOINTABLE_OBJECT_GRAPH" or "/.ATTRIBUTES/" in k for k in keys)

    net = keras.Sequential([keras.layers.Dense(2, name="out")])
    net(tf.zeros([1, 1]))
    step = tf.Variable(0, dtype=tf.int64)
    tf.train.Checkpoint(net=net, step=step).restore(latest).expect_partial()
    assert int(step.numpy()) == 10
    values = trained_values(estimator)
    np.testing.assert_array_equal(net.layers[0].kernel.numpy(), values["sequential/out/kernel"])
    np.testing.assert_array_equal(net.layers[0].bias.numpy(), values["sequential/out/bias"])
    assert np.any(values["sequential/out/bias"] != 0.0)  # trained, not initial


def test_training_resumes_with_weights_and_optimizer_state(tmp_path):
    def estimator(name):
        config = keras_estimator.RunConfig(tf_random_seed=3)
        return keras_estimator.Estimator(make_model_fn(), str(tmp_path / name), config=config)

    estimator("split").train(constant_input, steps=10)
    resumed = estimator("split")
    resumed.train(constant_input, steps=5)
    straight = estimator("straight")
    straight.train(constant_input, steps=15)

    assert resumed.get_variable_value("global_step") == 15
    assert tf.train.latest_checkpoint(str(tmp_path / "split")).endswith("model.ckpt-15")
    # Same initial weights (same seed) and the same batches:
    # equal only if weights, Adam's moments and its iteration count came back.
    for name, value in trained_values(straight).items():
        np.testing.assert_array_equal(resumed.get_variable_value(name), value)


def test_evaluate_predict_and_export_read_object_based_checkpoints(tmp_path):
    estimator = keras_estimator.Estimator(make_model_fn(), str(tmp_path / "model"))
    estimator.train(constant_input, steps=10)
    expected = estimator.evaluate(lambda: constant_input().take(1))

    fresh = keras_estimator.Estimator(make_model_fn(), str(tmp_path / "model"))
    metrics = fresh.evaluate(lambda: constant_input().take(1))
    assert metrics["global_step"] == 10
    assert metrics["loss"] == expected["loss"]
    predictions = [p["y"] for p in fresh.predict(lambda: tf.data.Dataset.from_tensors({"x": X}))]
    values = trained_values(estimator)
    want = X @ values["sequential/out/kernel"] + values["sequential/out/bias"]
    np.testing.assert_allclose(np.stack(predictions), want, rtol=1e-6)

    def serving_input():
        x = tf.compat.v1.placeholder(tf.float32, [None, 1], name="x")
        return keras_estimator.export.ServingInputReceiver({"x": x}, {"x": x})

    export_dir = fresh.export_saved_model(str(tmp_path / "export"), serving_input)
    served = tf.saved_model.load(export_dir).signatures["serving_default"]
    np.testing.assert_allclose(served(x=tf.constant(X))["y"].numpy(), want, rtol=1e-6)


class TwoDense(keras.Model):
    """Two unnamed Dense layers, as in tf.estimator's object-checkpointing test."""

    def __init__(self):
        super().__init__()
        self.dense_one = keras.layers.Dense(2)
        self.dense_two = keras.layers.Dense(1)

    def call(self, inputs):
        return self.dense_two(self.dense_one(inputs))


def two_dense_model_fn(features, labels, mode):
    model = TwoDense()
    ckpt = tf.train.Checkpoint(step=tf.compat.v1.train.get_or_create_global_step(), model=model)
    output = model(features["x"])
    scaffold = tf.compat.v1.train.Scaffold(saver=ckpt)
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions={"y": output}, scaffold=scaffold)
    loss = tf.reduce_mean(tf.square(output - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return EstimatorSpec(mode, loss=loss, train_op=train_op, scaffold=scaffold)


def test_a_checkpoint_a_program_wrote_is_read_by_its_objects_paths(tmp_path):
    # A program's own model, saved by its own tf.train.Checkpoint before any
    # Estimator: its variables were named otherwise than the model_fn's
    # (Keras numbers the layers of each new model), so only the paths from
    # the Checkpoint (model/dense_two/bias) match, as 2.15's Scaffold saver
    # matched them. 2.15's figures for these weights, from the reference
    # venv: predictions 14.25 and 14.75, evaluation loss 101.5625 at step 40,
    # and after train(steps=2) loss 30.0722 at step 42.
    x = np.array([[1.0], [2.0]], np.float32)
    model = TwoDense()
    model(tf.constant(x))
    model.dense_one.kernel.assign([[0.5, -1.0]])
    model.dense_one.bias.assign([0.25, 0.5])
    model.dense_two.kernel.assign([[2.0], [0.5]])
    model.dense_two.bias.assign([13.0])
    model_dir = str(tmp_path / "model")
    tf.train.Checkpoint(step=tf.Variable(40, dtype=tf.int64), model=model).save(
        os.path.join(model_dir, "ckpt")
    )

    def input_fn():
        return tf.data.Dataset.from_tensors(({"x": x}, x * 3.0)).repeat()

    def serving_input():
        placeholder = tf.compat.v1.placeholder(tf.float32, [None, 1], name="x")
        return keras_estimator.export.ServingInputReceiver(
            {"x": placeholder}, {"x": placeholder}
        )

    estimator = keras_estimator.Estimator(two_dense_model_fn, model_dir)
    predictions = [float(p["y"][0]) for p in estimator.predict(lambda: input_fn().take(1))]
    assert predictions == [14.25, 14.75]
    assert estimator.evaluate(input_fn, steps=1) == {"loss": 101.5625, "global_step": 40}
    served = tf.saved_model.load(estimator.export_saved_model(str(tmp_path / "export"), serving_input))
    np.testing.assert_array_equal(
        served.signatures["serving_default"](x=tf.constant(x))["y"].numpy().ravel(), [14.25, 14.75]
    )
    estimator.train(input_fn, steps=2)
    metrics = estimator.evaluate(input_fn, steps=1)
    assert metrics["global_step"] == 42
    np.testing.assert_allclose(metrics["loss"], 30.072200775146484, rtol=1e-6)


def test_a_checkpoint_without_the_global_step_resumes_at_the_saved_step(tmp_path):
    model_fn = make_model_fn(track_step=False)
    keras_estimator.Estimator(model_fn, str(tmp_path)).train(constant_input, steps=10)
    assert _checkpoint.step_of(tf.train.latest_checkpoint(str(tmp_path))) == 10

    resumed = keras_estimator.Estimator(model_fn, str(tmp_path))
    resumed.train(constant_input, steps=5)
    assert resumed.get_variable_value("global_step") == 15
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-15")


def test_variables_the_checkpoint_misses_are_named(tmp_path, caplog):
    estimator = keras_estimator.Estimator(make_model_fn(extra=True), str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        estimator.train(constant_input, steps=2)
    untracked = [r.getMessage() for r in caplog.records if "does not track" in r.getMessage()]
    assert len(untracked) == 1
    assert "'scale'" in untracked[0]
    assert "sequential/out/kernel" not in untracked[0]

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        keras_estimator.Estimator(make_model_fn(extra=True), str(tmp_path)).evaluate(
            lambda: constant_input().take(1)
        )
    assert any("holds no value for ['scale']" in r.getMessage() for r in caplog.records)


@given(
    units=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(lambda u: [*u[:-1], 2]),
    steps=st.integers(1, 4),
)
def test_object_based_round_trip_keeps_every_variable(tmp_path_factory, units, steps):
    """Every variable the Checkpoint tracks reads back bitwise, by name."""
    model_dir = str(tmp_path_factory.mktemp("model"))
    estimator = keras_estimator.Estimator(make_model_fn(units=tuple(units)), model_dir)
    estimator.train(constant_input, steps=steps)
    latest = tf.train.latest_checkpoint(model_dir)
    saveable = estimator._store.saveable()
    reread = {name: tf.Variable(tf.zeros_like(v)) for name, v in saveable.items()}
    restored = _checkpoint.restore(reread, latest)
    assert sorted(restored) == sorted(saveable)
    for name, variable in saveable.items():
        np.testing.assert_array_equal(reread[name].numpy(), variable.numpy())


def test_a_keras_optimizer_update_in_tf_group_trains(tmp_path):
    estimator = keras_estimator.Estimator(make_model_fn(), str(tmp_path))
    estimator.train(constant_input, steps=1)
    before = trained_values(estimator)
    estimator.train(constant_input, steps=20)
    after = trained_values(estimator)
    assert estimator.get_variable_value("global_step") == 21
    # The grouped Keras update ran: the weights moved and the loss fell.
    assert np.any(before["sequential/out/kernel"] != after["sequential/out/kernel"])
    assert estimator.get_variable_value("adam/iteration") == 21


def test_tf_group_outside_model_fn_is_tensorflows(tmp_path):
    original = tf.group
    estimator = keras_estimator.Estimator(make_model_fn(), str(tmp_path))
    estimator.train(constant_input, steps=1)
    assert tf.group is original
    assert tf.compat.v1.group is original
    variable = keras.Variable(1.0)

    @tf.function
    def group_outside():
        tf.group(variable)
        return 0

    with pytest.raises(TypeError, match="should be zero or more"):
        group_outside()


def test_a_stale_temporary_directory_of_a_checkpoint_write_is_removed(tmp_path):
    stale = tmp_path / "model.ckpt-3_temp_temp"
    stale.mkdir()
    (stale / "part-00000-of-00001.index").write_bytes(b"x")
    (stale / "part-00000-of-00001.data-00000-of-00001").write_bytes(b"x")
    foreign = tmp_path / "model.ckpt-4_temp_temp"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")

    keras_estimator.Estimator(make_model_fn(), str(tmp_path)).train(constant_input, steps=1)
    assert not stale.exists()
    assert (foreign / "notes.txt").read_text() == "mine"
    assert not any(tmp_path.glob("*_temp*.index"))


def test_a_session_saver_in_the_scaffold_is_refused_naming_checkpoint(tmp_path):
    def model_fn(features, labels, mode):
        spec = make_model_fn()(features, labels, mode)
        return spec._replace(scaffold=tf.compat.v1.train.Scaffold(saver=object()))

    estimator = keras_estimator.Estimator(model_fn, str(tmp_path))
    with pytest.raises(ValueError, match=r"\['saver'\].*tf.train.Checkpoint"):
        estimator.train(constant_input, steps=1)


def test_object_based_checkpoints_under_mirrored_strategy(tmp_path):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    config = keras_estimator.RunConfig(train_distribute=strategy, tf_random_seed=3)
    estimator = keras_estimator.Estimator(make_model_fn(), str(tmp_path), config=config)
    estimator.train(constant_input, steps=6)
    latest = tf.train.latest_checkpoint(str(tmp_path))
    net = keras.Sequential([keras.layers.Dense(2, name="out")])
    net(tf.zeros([1, 1]))
    step = tf.Variable(0, dtype=tf.int64)
    tf.train.Checkpoint(net=net, step=step).restore(latest).expect_partial()
    assert int(step.numpy()) == 6
    kernel = estimator.get_variable_value("sequential/out/kernel")
    np.testing.assert_array_equal(net.layers[0].kernel.numpy(), kernel)

    resumed = keras_estimator.Estimator(make_model_fn(), str(tmp_path), config=config)
    resumed.train(constant_input, steps=2)
    assert resumed.get_variable_value("global_step") == 8

