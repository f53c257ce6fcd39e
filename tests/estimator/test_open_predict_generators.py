"""A predict() generator keeps the values it started with, as in tf.estimator 2.15.

2.15 ran each predict() generator in a session of its own, restored when it
started, so a train(), evaluate() or other predict() call made while it was
open did not change what it predicted next. The figures are 2.15's, from the
same calls run in the reference venv (tensorflow-estimator 2.15.0): a
one-weight linear model, w = 0 at first, trained by gradient descent towards
w = 1 on x = 1, predicting x = 0, 1, ..., 5 in batches of two.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke


def _model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
    prediction = tf.matmul(features["x"], w)
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"p": prediction[:, 0]})
    loss = tf.reduce_mean(tf.square(prediction - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops={"w": tf.compat.v1.metrics.mean(w)}
    )


def _train_input():
    ones = np.ones((8, 1), np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": ones}, ones)).repeat().batch(2)


def _predict_input():
    x = np.arange(6, dtype=np.float32).reshape(6, 1)
    return tf.data.Dataset.from_tensor_slices({"x": x}).batch(2)


def _take(generator, n):
    return [float(next(generator)["p"]) for _ in range(n)]


def test_training_while_a_generator_is_open_does_not_move_its_predictions(tmp_path):
    est = ke.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(_train_input, steps=2)  # w = 0.36
    first = est.predict(_predict_input)
    assert _take(first, 1) == [0.0]
    est.train(_train_input, steps=5)  # w = 0.790284
    # 2.15: 0.36, 0.72, 1.08 (before: 0.36, then the trained 1.58057, 2.37085).
    assert _take(first, 3) == pytest.approx([0.36, 0.72, 1.08], abs=1e-6)
    second = est.predict(_predict_input)
    assert _take(second, 2) == pytest.approx([0.0, 0.790284], abs=1e-6)
    assert _take(first, 2) == pytest.approx([1.44, 1.8], abs=1e-6)
    rest = [float(p["p"]) for p in second]
    assert rest == pytest.approx([1.580568, 2.370852, 3.161136, 3.95142], abs=1e-5)
    assert list(first) == []


def test_other_checkpoints_read_while_generators_are_open(tmp_path):
    config = ke.RunConfig(save_checkpoints_steps=2)
    est = ke.Estimator(_model_fn, model_dir=str(tmp_path), config=config)
    est.train(_train_input, steps=4)  # w = 0.5904 (at step 2: 0.36)
    step_2 = os.path.join(str(tmp_path), "model.ckpt-2")
    latest = est.predict(_predict_input)
    assert _take(latest, 2) == pytest.approx([0.0, 0.5904], abs=1e-6)
    older = est.predict(_predict_input, checkpoint_path=step_2)
    assert _take(older, 3) == pytest.approx([0.0, 0.36, 0.72], abs=1e-6)
    assert _take(latest, 2) == pytest.approx([1.1808, 1.7712], abs=1e-6)
    metrics = est.evaluate(lambda: _train_input().take(1), checkpoint_path=step_2)
    assert metrics["w"] == pytest.approx(0.36, abs=1e-6)
    # 2.15, all three: each generator kept its own checkpoint's values.
    assert _take(latest, 2) == pytest.approx([2.3616, 2.952], abs=1e-5)
    assert _take(older, 3) == pytest.approx([1.08, 1.44, 1.8], abs=1e-6)
    fresh = [float(p["p"]) for p in est.predict(_predict_input)]
    assert fresh == pytest.approx([0.0, 0.5904, 1.1808, 1.7712, 2.3616, 2.952], abs=1e-5)


def test_under_mirrored_strategy_an_open_generator_keeps_its_values(tmp_path):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    config = ke.RunConfig(train_distribute=strategy, eval_distribute=strategy)
    est = ke.Estimator(_model_fn, model_dir=str(tmp_path), config=config)
    est.train(_train_input, steps=2)
    before = [float(p["p"]) for p in est.predict(_predict_input)]
    generator = est.predict(_predict_input)
    head = _take(generator, 1)
    est.train(_train_input, steps=5)
    assert head + [float(p["p"]) for p in generator] == pytest.approx(before, abs=1e-6)
    after = [float(p["p"]) for p in est.predict(_predict_input)]
    assert after[1] > before[1] + 0.1  # training did move the variables


def test_a_variable_that_cannot_be_put_back_leaves_training_alone(tmp_path, caplog):
    # A replica-summed variable cannot be assigned across replicas: the open
    # generator then goes on with the new values, and training is untouched.
    def model_fn(features, labels, mode):
        total = tf.compat.v1.get_variable(
            "seen",
            [],
            initializer=tf.compat.v1.zeros_initializer(),
            synchronization=tf.VariableSynchronization.ON_READ,
            aggregation=tf.VariableAggregation.SUM,
            trainable=False,
        )
        spec = _model_fn(features, labels, mode)
        if mode != ke.ModeKeys.TRAIN:
            return spec
        counted = total.assign_add(1.0)
        return spec._replace(train_op=tf.group(spec.train_op, counted))

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    config = ke.RunConfig(train_distribute=strategy, eval_distribute=strategy)
    est = ke.Estimator(model_fn, model_dir=str(tmp_path), config=config)
    est.train(_train_input, steps=2)
    generator = est.predict(_predict_input)
    assert _take(generator, 2) == pytest.approx([0.0, 0.36], abs=1e-6)  # its first batch
    caplog.set_level("WARNING", logger="keras_estimator")
    est.train(_train_input, steps=3)
    assert est.get_variable_value("global_step") == 5
    assert any("cannot keep the values" in r.getMessage() for r in caplog.records)
    trained = [float(p["p"]) for p in est.predict(_predict_input)]
    assert trained[1] > 0.6  # w = 0.67232 after 5 steps
    assert [float(p["p"]) for p in generator] == pytest.approx(trained[2:], abs=1e-6)


def test_a_generator_used_while_another_thread_trains_waits_for_it(tmp_path, caplog):
    # Its batch waits for the training call, then predicts with the values
    # it started with; training is left alone.
    import threading
    import time

    def train_with_a_pause(est, paused, resume):
        class Pause(ke.SessionRunHook):
            def after_run(self, run_context, run_values):
                if run_context.global_step == 4:
                    paused.set()
                    assert resume.wait(60)

        est.train(_train_input, steps=5, hooks=[Pause()])

    alone = ke.Estimator(_model_fn, model_dir=str(tmp_path / "alone"))
    alone.train(_train_input, steps=2)
    alone.train(_train_input, steps=5)

    est = ke.Estimator(_model_fn, model_dir=str(tmp_path / "shared"))
    est.train(_train_input, steps=2)
    generator = est.predict(_predict_input)
    assert _take(generator, 2) == pytest.approx([0.0, 0.36], abs=1e-6)
    paused, resume = threading.Event(), threading.Event()
    trainer = threading.Thread(target=train_with_a_pause, args=(est, paused, resume))
    caplog.set_level("WARNING", logger="keras_estimator")
    got = []
    reader = threading.Thread(target=lambda: got.append(float(next(generator)["p"])))
    trainer.start()
    try:
        assert paused.wait(60)
        reader.start()
        deadline = time.monotonic() + 60
        while not any("waits for the train()" in r.getMessage() for r in caplog.records):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert not got  # mid-training in the other thread
    finally:
        resume.set()
        trainer.join(60)
        reader.join(60)
    assert not trainer.is_alive() and not reader.is_alive()
    assert got == pytest.approx([0.72], abs=1e-6)
    assert est.get_variable_value("w") == pytest.approx(alone.get_variable_value("w"))
    assert est.get_variable_value("global_step") == 7


def test_a_suspended_generator_leaves_no_loop_behind(tmp_path):
    # While a generator waits at a yield, and after generators left open are
    # dropped in any order, the thread runs no loop: a stock hook begun
    # outside one still says so (a dropped generator used to put back the
    # loop of the one opened before it).
    est = ke.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(_train_input, steps=2)
    first, second = est.predict(_predict_input), est.predict(_predict_input)
    _take(first, 1)
    _take(second, 1)

    def begin_outside_a_loop():
        with pytest.raises(RuntimeError, match="run it in Estimator.train"):
            ke.CheckpointSaverHook(str(tmp_path), save_steps=1).begin()

    begin_outside_a_loop()
    first.close()
    begin_outside_a_loop()
    second.close()
    begin_outside_a_loop()
