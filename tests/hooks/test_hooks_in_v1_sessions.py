"""Stock hooks handed to a tf.compat.v1.train.MonitoredSession behave as tf.estimator 2.15's.

2.15's `tf.estimator.LoggingTensorHook` (and the other stock hooks) were the
`tf.compat.v1.train` classes, and `install()` makes those names this
package's: a TF1 program running them in a `MonitoredSession` of its own,
in a graph, gets 2.15's log lines, checkpoints, listener calls, summaries,
final values and NaN error. The program and 2.15's results come from
`tests/fixtures/make_tf215_v1_session_hooks_fixture.py`.
"""

import json
import pathlib
import types

import pytest
import tensorflow as tf

import keras_estimator as ke
from tests.fixtures import make_tf215_v1_session_hooks_fixture as program

FIXTURE = pathlib.Path(__file__).parents[1] / "fixtures" / "tf215_v1_session_hooks.json"
EXPECTED = json.loads(FIXTURE.read_text())


def _compare(got):
    # Before: AttributeError: 'SessionRunContext' object has no attribute
    # 'global_step' in StopAtStepHook, and CheckpointSaverHook(...) asked for
    # an Estimator's loop.
    for key in (
        "runs",
        "lines",
        "listener_calls",
        "checkpoints",
        "checkpoint_w",
        "final_ops_values",
        "summaries",
        "step_counter_steps",
        "nan",
    ):
        assert got[key] == EXPECTED[key], key


def test_keras_estimator_hooks_in_a_monitored_session(tmp_path):
    _compare(program.run_program(ke, str(tmp_path)))


def test_tf_compat_v1_train_hooks_after_install(tmp_path):
    with ke.install():
        train = tf.compat.v1.train
        assert train.StopAtStepHook is ke.StopAtStepHook
        hooks = types.SimpleNamespace(
            **{
                name: getattr(train, name)
                for name in (
                    "CheckpointSaverListener",
                    "CheckpointSaverHook",
                    "FeedFnHook",
                    "FinalOpsHook",
                    "GlobalStepWaiterHook",
                    "LoggingTensorHook",
                    "NanLossDuringTrainingError",
                    "NanTensorHook",
                    "StepCounterHook",
                    "StopAtStepHook",
                    "SummarySaverHook",
                )
            }
        )
        _compare(program.run_program(hooks, str(tmp_path)))


def test_a_session_given_to_a_run_context_is_its_session():
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        context = ke.SessionRunContext(original_args=None, session=session)
        assert context.session is session


def test_in_estimator_train_a_tf1_saver_is_still_refused_when_training_begins(tmp_path):
    hook = ke.CheckpointSaverHook(str(tmp_path), save_steps=1, scaffold=object())
    est = ke.Estimator(
        lambda features, labels, mode: ke.EstimatorSpec(
            mode,
            loss=tf.constant(1.0),
            train_op=tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1),
        ),
        model_dir=str(tmp_path / "model"),
    )
    with pytest.raises(ValueError, match=r"scaffold=\.\.\.\) is not supported: TF1 Savers"):
        est.train(lambda: tf.data.Dataset.from_tensors(0.0).repeat(), steps=2, hooks=[hook])


def test_profiler_hook_in_a_monitored_session_writes_2_15s_timelines(tmp_path):
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        increment = tf.compat.v1.assign_add(step, 1)
        hooks = [
            ke.ProfilerHook(save_steps=2, output_dir=str(tmp_path)),
            ke.StopAtStepHook(last_step=7),
        ]
        with tf.compat.v1.train.MonitoredSession(hooks=hooks) as session:
            while not session.should_stop():
                session.run(increment)
    timelines = sorted(p.name for p in tmp_path.glob("timeline-*.json"))
    # 2.15, the same program with tf.estimator.ProfilerHook.
    assert timelines == ["timeline-2.json", "timeline-4.json", "timeline-6.json"]
