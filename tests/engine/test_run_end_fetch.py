"""A logged or summarized step is the last step of a fused run, not a run of its own.

With the Estimator's default hooks (logging, step counter, summaries,
checkpoints), the steps before a due step and the due step itself run in
one compiled call: the hooks see runs of 1, 100, 100, ... steps instead of
1, 99, 1, 99, 1, ... What they log, write and save is what step-by-step
training gives.
"""

import logging
import tempfile
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st
from tensorflow.core.util import event_pb2

import keras_estimator as ke
from tests._models import make_data, mlp_model_fn


class Boundaries(ke.SessionRunHook):
    """Records the global step after each run, shortening none."""

    def __init__(self):
        self.steps = []

    def steps_until_needed(self, global_step):
        return None

    def after_run(self, run_context, run_values):
        self.steps.append(run_context.global_step)


class EveryStep(ke.SessionRunHook):
    """A hook with no schedule: every step is a run of its own."""


def summarising_model_fn(features, labels, mode, params):
    spec = mlp_model_fn(features, labels, mode, params)
    if mode == ke.ModeKeys.TRAIN:
        tf.compat.v1.summary.scalar("v1_loss_copy", spec.loss)
        tf.compat.v1.summary.histogram("v1_features", features["x"])
        tf.summary.scalar("v2_mean_feature", tf.reduce_mean(features["x"]))
    return spec


def _events(model_dir):
    """(step, tag, serialized value) of every summary value, rates apart."""
    events, rate_steps = [], []
    for path in sorted(Path(model_dir).glob("events.out.tfevents.*")):
        for record in tf.data.TFRecordDataset(str(path)):
            event = event_pb2.Event.FromString(record.numpy())
            for value in event.summary.value:
                if value.tag == "global_step/sec":  # a rate: timing, not training
                    rate_steps.append(event.step)
                else:
                    events.append((event.step, value.tag, value.SerializeToString()))
    return events, rate_steps


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        message = record.getMessage()
        if message.startswith("loss = "):
            self.lines.append(message.split(" (")[0])  # without the elapsed time


def _train(config, steps, examples, batch_size, step_by_step, hooks=(), epochs=3):
    x, y = make_data(num_examples=examples)

    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        return data.repeat(epochs).batch(batch_size)

    lines = _Lines()
    logger = logging.getLogger("keras_estimator")
    old_level = logger.level
    logger.addHandler(lines)
    logger.setLevel(logging.INFO)
    try:
        with tempfile.TemporaryDirectory() as model_dir:
            est = ke.Estimator(
                summarising_model_fn,
                model_dir=model_dir,
                params={"hidden": [5]},
                config=ke.RunConfig(tf_random_seed=7, **config),
            )
            extra = [EveryStep()] if step_by_step else []
            est.train(input_fn, steps=steps, hooks=[*hooks, *extra])
            weights = {n: est.get_variable_value(n) for n in est.get_variable_names()}
            events, rate_steps = _events(model_dir)
            checkpoints = sorted(p.name for p in Path(model_dir).glob("*.index"))
    finally:
        logger.removeHandler(lines)
        logger.setLevel(old_level)
    return weights, events, rate_steps, lines.lines, checkpoints


@given(
    summary_every=st.integers(1, 9),
    log_every=st.integers(1, 9),
    save_every=st.one_of(st.none(), st.integers(2, 12)),
    steps=st.one_of(st.none(), st.integers(1, 40)),
    examples=st.integers(8, 24),
)
def test_default_hooks_fused_equal_step_by_step(
    summary_every, log_every, save_every, steps, examples
):
    """Weights bit for bit, summaries (steps, tags, values), log lines and
    checkpoints are those of one step per run, also when the input ends
    before a due step (`steps=None`: the input's three epochs)."""
    config = {
        "save_summary_steps": summary_every,
        "log_step_count_steps": log_every,
        "save_checkpoints_steps": save_every,
        "save_checkpoints_secs": None if save_every else 600,
    }
    fused = _train(config, steps, examples, 4, step_by_step=False)
    alone = _train(config, steps, examples, 4, step_by_step=True)
    assert fused[0].keys() == alone[0].keys()
    for name in fused[0]:
        np.testing.assert_array_equal(fused[0][name], alone[0][name], err_msg=name)
    assert fused[1] == alone[1]
    assert fused[2] == alone[2]
    assert fused[3] == alone[3]
    assert fused[4] == alone[4]


def test_due_step_ends_the_run_before_it():
    """Default cadences (100): runs end at 1, 101, 201, then the last step;
    a separate run for each due step made them end at 1, 100, 101, 200, 201."""
    boundaries = Boundaries()
    _train({}, 250, 64, 4, step_by_step=False, hooks=[boundaries], epochs=None)
    assert boundaries.steps == [1, 101, 201, 250]


def test_input_ending_before_the_due_step_ends_the_run_without_fetching():
    """48 steps of input, logging every 100: the second run ends at 48 with
    no line for it, as the run before a separate due step ended there."""
    boundaries = Boundaries()
    _, _, _, lines, checkpoints = _train(
        {}, None, 64, 4, step_by_step=False, hooks=[boundaries]
    )
    assert boundaries.steps == [1, 48]
    assert [line.split("step = ")[1] for line in lines] == ["0"]
    assert checkpoints == ["model.ckpt-0.index", "model.ckpt-48.index"]


@pytest.mark.parametrize("nan_step", [30, 41])
def test_nan_loss_before_the_due_step_ends_the_run_at_its_step(nan_step):
    """A NaN loss at step 30 (inside the fused steps) stops training at 30,
    running neither the fused steps after it nor the logged step (41), as
    tf.estimator stopped at the NaN step; one at 41 (the logged step) stops
    at 41."""
    x, y = make_data(num_examples=16)

    def model_fn(features, labels, mode, params):
        step = tf.compat.v1.train.get_global_step()
        # The global step before step `nan_step` is one less; read before
        # the train_op advances it.
        bad = tf.equal(tf.identity(step), nan_step - 1)
        logits = ke.compat.layers.dense(features["x"], 3)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        loss = tf.where(bad, tf.constant(np.nan, loss.dtype), loss)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=step
        )
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(4)

    with tempfile.TemporaryDirectory() as model_dir:
        est = ke.Estimator(
            model_fn,
            model_dir=model_dir,
            config=ke.RunConfig(log_step_count_steps=40, save_summary_steps=40),
        )
        with pytest.raises(ke.NanLossDuringTrainingError):
            est.train(input_fn, steps=100)
        stopped = int(est._store.global_step().numpy())
    assert stopped == nan_step


def test_a_training_compiles_one_loop_for_runs_with_and_without_a_fetch(monkeypatch):
    """Runs that end with a fetch, runs that end with none (the end of a
    train() call) and a later call's lone first step share one compiled
    loop: a third function compiled inside a later train() call cost a
    small model more than the 300 steps it ran."""
    from keras_estimator._src.engine import fused_loop

    traced = {"plain": 0, "then_fetching": 0}

    def counting(make, kind):
        def made(*args, **kwargs):
            function = make(*args, **kwargs)

            class Counted:
                def get_concrete_function(self, *specs):
                    traced[kind] += 1
                    return function.get_concrete_function(*specs)

            return Counted()

        return made

    monkeypatch.setattr(fused_loop, "fused_steps", counting(fused_loop.fused_steps, "plain"))
    monkeypatch.setattr(
        fused_loop,
        "fused_then_fetching",
        counting(fused_loop.fused_then_fetching, "then_fetching"),
    )
    x, y = make_data(num_examples=64)
    boundaries = Boundaries()
    with tempfile.TemporaryDirectory() as model_dir:
        est = ke.Estimator(mlp_model_fn, model_dir=model_dir, params={"hidden": [5]})

        def input_fn():
            return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(8)

        est.train(input_fn, steps=100, hooks=[boundaries])
        est.train(input_fn, steps=300, hooks=[boundaries])
        assert int(est.get_variable_value("global_step")) == 400
    # Runs: the first step, 2..100 (no fetch due at its end), then 101 alone
    # (a new call's first step), 102..201, ..., 302..400 (no fetch due).
    assert boundaries.steps == [1, 100, 101, 201, 301, 400]
    assert traced == {"plain": 0, "then_fetching": 1}
