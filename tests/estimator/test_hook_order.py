"""Hooks in Estimator.train run in tf.estimator 2.15's order at every point.

2.15: the chief's CheckpointSaverHook (with its listeners) and the
model_fn's training_chief_hooks, the step counter and summary saver, then
the user's hooks, then the model_fn's training_hooks. A user hook that
raises in after_run therefore does so after that step's checkpoint.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf

import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn

X, Y = make_data()


class Recorder(tf.compat.v1.train.SessionRunHook):
    def __init__(self, name, ledger, raise_at_run=None):
        self.name, self.ledger, self.raise_at_run = name, ledger, raise_at_run
        self.runs = 0

    def begin(self):
        self.ledger.append(("begin", self.name))

    def before_run(self, run_context):
        self.ledger.append(("before_run", self.name))

    def after_run(self, run_context, run_values):
        self.runs += 1
        self.ledger.append(("after_run", self.name))
        if self.runs == self.raise_at_run:
            raise RuntimeError("Interruption")

    def end(self, session):
        self.ledger.append(("end", self.name))


class Listener(tf.compat.v1.train.CheckpointSaverListener):
    def __init__(self, ledger):
        self.ledger = ledger

    def after_save(self, session, global_step_value):
        self.ledger.append(("after_save", global_step_value))


def spec_hooks_model_fn(ledger):
    def model_fn(features, labels, mode, params):
        spec = mlp_model_fn(features, labels, mode, params)
        if mode != ke.ModeKeys.TRAIN:
            return spec
        return spec._replace(
            training_chief_hooks=[Recorder("chief", ledger)],
            training_hooks=[Recorder("training", ledger)],
        )

    return model_fn


def checkpoint_steps(model_dir):
    state = tf.train.get_checkpoint_state(str(model_dir))
    return [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]


def test_a_user_hook_raising_at_step_6_leaves_checkpoints_2_to_6(tmp_path):
    # The fault-tolerance guide's program: 2.15 keeps checkpoints 2..6.
    est = ke.Estimator(
        mlp_model_fn, model_dir=str(tmp_path), params={"hidden": [8]},
        config=ke.RunConfig(save_checkpoints_steps=1),
    )
    with pytest.raises(RuntimeError, match="Interruption"):
        est.train(input_fn(X, Y), hooks=[Recorder("user", [], raise_at_run=6)],
                  max_steps=10)
    assert checkpoint_steps(tmp_path) == [2, 3, 4, 5, 6]
    assert est.get_variable_value("global_step") == 6


def test_hooks_run_in_2_15_order_at_every_point(tmp_path):
    ledger = []
    est = ke.Estimator(
        spec_hooks_model_fn(ledger), model_dir=str(tmp_path), params={"hidden": [8]},
        config=ke.RunConfig(save_checkpoints_steps=1),
    )
    est.train(
        input_fn(X, Y), hooks=[Recorder("user", ledger)], steps=2,
        saving_listeners=[Listener(ledger)],
    )
    names = ["chief", "user", "training"]
    for point in ("begin", "before_run", "after_run", "end"):
        seen = [name for p, name in ledger if p == point]
        assert seen == names * (seen.count("chief")), (point, seen)
    # Each step's checkpoint is written (after_save) before any hook's after_run.
    first_after_run = ledger.index(("after_run", "chief"))
    assert ledger[first_after_run - 1] == ("after_save", 1)


def test_a_checkpoint_saver_of_the_programs_own_replaces_the_default(tmp_path):
    # 2.15 (run in its venv): listeners see [0, 3, 6, 9, 12] and the model_dir
    # holds only the program's saver's checkpoints 0, 3, 6, 9, 12.
    ledger = []
    est = ke.Estimator(
        mlp_model_fn, model_dir=str(tmp_path), params={"hidden": [8]},
        config=ke.RunConfig(save_checkpoints_steps=5),
    )
    own = ke.CheckpointSaverHook(str(tmp_path), save_steps=3)
    est.train(input_fn(X, Y), steps=12, hooks=[own], saving_listeners=[Listener(ledger)])
    assert [step for _, step in ledger] == [0, 3, 6, 9, 12]
    assert checkpoint_steps(tmp_path) == [0, 3, 6, 9, 12]



# Run in a child process: the event files are complete once it exits (as in
# 2.15, a train() that raised left its writers' last events buffered until
# then).
_RAISING_AT_STEP_6 = """
import sys
import tensorflow as tf
import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn
from tests.estimator.test_hook_order import Recorder

X, Y = make_data()
est = ke.Estimator(
    mlp_model_fn, model_dir=sys.argv[1], params={"hidden": [8]},
    config=ke.RunConfig(save_checkpoints_steps=1, save_summary_steps=1, log_step_count_steps=1),
)
try:
    est.train(input_fn(X, Y), hooks=[Recorder("user", [], raise_at_run=6)], max_steps=10)
except RuntimeError as error:
    assert str(error) == "Interruption"
    print("RAISED")
"""


def _event_steps(model_dir):
    steps = {}
    for path in tf.io.gfile.glob(f"{model_dir}/events.out*"):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                steps.setdefault(value.tag, []).append(event.step)
    return {tag: sorted(found) for tag, found in steps.items()}


def test_the_step_counter_and_summary_saver_see_the_step_a_user_hook_raises_at(tmp_path):
    # In 2.15 they ran before the user's hooks in after_run, so the step a
    # user hook raised at was counted and summarized: loss at steps 1..6,
    # global_step/sec at 2..6 (the first count only starts the clock), all
    # in one event file.
    repo = Path(__file__).resolve().parents[2]
    child = subprocess.run(
        [sys.executable, "-c", _RAISING_AT_STEP_6, str(tmp_path)],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo), "TF_CPP_MIN_LOG_LEVEL": "2"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert child.returncode == 0 and "RAISED" in child.stdout, child.stderr[-3000:]
    steps = _event_steps(tmp_path)
    assert steps["loss"] == [1, 2, 3, 4, 5, 6]
    assert steps["global_step/sec"] == [2, 3, 4, 5, 6]
    assert len(tf.io.gfile.glob(f"{tmp_path}/events.out*")) == 1
