"""Readers of a model_dir whose trainer deletes the checkpoint they chose.

A trainer saving every step with `keep_checkpoint_max=2` deletes a
checkpoint one save after it stops being the newest: `evaluate()`,
`predict()` and export may choose it and find it gone when they read it.
They then read the newest checkpoint (a bounded number of times), and never
one the state file does not name as complete.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from tests import _models
from tests.checkpoint.test_model_dir_faults import save_steps, small_variables


def _estimator(model_dir, **config):
    return ke.Estimator(
        _models.mlp_model_fn,
        model_dir=str(model_dir),
        params={"hidden": [4]},
        config=ke.RunConfig(**config) if config else None,
    )


def _eval_input():
    x, y = _models.make_data(num_examples=16)
    return _models.input_fn(x, y, repeat=False)


def _receiver():
    x = tf.compat.v1.placeholder(tf.float32, [None, 4])
    return ke.export.ServingInputReceiver({"x": x}, {"x": x})


@pytest.fixture(scope="module")
def four_and_six(tmp_path_factory):
    """A model_dir with checkpoints 4 and 6 on disk (keep all)."""
    model_dir = tmp_path_factory.mktemp("trained")
    x, y = _models.make_data()
    _estimator(model_dir, save_checkpoints_steps=2, keep_checkpoint_max=None).train(
        _models.input_fn(x, y), steps=6
    )
    return model_dir


def _listing_four(source, tmp_path):
    """A copy whose state file names step 4 as newest; step 6's files wait."""
    model_dir = tmp_path / "run[1]"
    model_dir.mkdir()
    for name in os.listdir(source):
        if name.startswith(("model.ckpt-4.", "model.ckpt-6.")):
            (model_dir / name).write_bytes((source / name).read_bytes())
    _checkpoint._write_state(str(model_dir), ["model.ckpt-4"], [time.time()], time.time())
    return model_dir


def _prune_at_first_read(monkeypatch, model_dir, prefix="model.ckpt-4."):
    """The trainer's next save lands between the reader's choice and its read.

    It deletes the files starting with `prefix`: all of step 4's, or only its
    data (a reader that had read the index when the data went).
    """
    restore = _checkpoint.restore
    tried = []

    def racing_restore(variables, path, **kwargs):
        if not tried:
            tried.append(os.path.basename(path))
            now = time.time()
            _checkpoint._write_state(str(model_dir), ["model.ckpt-6"], [now], now)
            for name in os.listdir(model_dir):
                if name.startswith(prefix):
                    os.remove(model_dir / name)
        return restore(variables, path, **kwargs)

    monkeypatch.setattr(_checkpoint, "restore", racing_restore)
    return tried


@pytest.mark.parametrize("pruned", ["model.ckpt-4.", "model.ckpt-4.data"])
def test_evaluate_reads_the_newest_when_its_checkpoint_is_pruned(
    four_and_six, tmp_path, monkeypatch, pruned
):
    model_dir = _listing_four(four_and_six, tmp_path)
    tried = _prune_at_first_read(monkeypatch, model_dir, pruned)
    # Was NotFoundError: Unsuccessful TensorSliceReader constructor ... model.ckpt-4,
    # or, with the index still there, "model.ckpt-4 is damaged".
    metrics = _estimator(model_dir).evaluate(_eval_input())
    assert tried == ["model.ckpt-4"]
    assert metrics["global_step"] == 6
    monkeypatch.undo()
    assert metrics == pytest.approx(_estimator(four_and_six).evaluate(_eval_input()))


def test_predict_reads_the_newest_when_its_checkpoint_is_pruned(
    four_and_six, tmp_path, monkeypatch
):
    model_dir = _listing_four(four_and_six, tmp_path)
    tried = _prune_at_first_read(monkeypatch, model_dir)
    predicted = [p["logits"] for p in _estimator(model_dir).predict(_eval_input())]
    assert tried == ["model.ckpt-4"]
    monkeypatch.undo()
    expected = [p["logits"] for p in _estimator(four_and_six).predict(_eval_input())]
    np.testing.assert_array_equal(predicted, expected)


def test_export_reads_the_newest_when_its_checkpoint_is_pruned(
    four_and_six, tmp_path, monkeypatch
):
    model_dir = _listing_four(four_and_six, tmp_path)
    tried = _prune_at_first_read(monkeypatch, model_dir)
    export_dir = _estimator(model_dir).export_saved_model(str(tmp_path / "export"), _receiver)
    assert tried == ["model.ckpt-4"]
    assert os.listdir(tmp_path / "export") == [os.path.basename(export_dir.decode())]
    monkeypatch.undo()
    x = _models.make_data(num_examples=16)[0]
    served = tf.saved_model.load(export_dir.decode()).signatures["serving_default"]
    expected = [p["logits"] for p in _estimator(four_and_six).predict(_eval_input())]
    np.testing.assert_allclose(served(x=tf.constant(x))["logits"].numpy(), expected, atol=1e-6)


def test_an_explicit_checkpoint_path_is_not_replaced(four_and_six, tmp_path):
    model_dir = _listing_four(four_and_six, tmp_path)
    for name in os.listdir(model_dir):
        if name.startswith("model.ckpt-4."):
            os.remove(model_dir / name)
    # The checkpoint named is gone: 2.15's error for it, never the newest instead.
    with pytest.raises(ValueError, match=r"The passed save_path is not a valid checkpoint: .*model\.ckpt-4"):
        _estimator(model_dir).evaluate(
            _eval_input(), checkpoint_path=str(model_dir / "model.ckpt-4")
        )


def test_a_reader_outpaced_every_time_gets_an_error_naming_model_dir(tmp_path):
    save_steps(tmp_path, [1], max_to_keep=1)
    policy = _checkpoint.RetentionPolicy(max_to_keep=1)
    tried = []

    def always_outpaced(path):
        tried.append(os.path.basename(path))
        step = len(tried) + 1
        _checkpoint.save(small_variables(step), str(tmp_path), step, policy)
        with _checkpoint._reading(path) as reader:
            return reader.get_variable_to_shape_map()

    with pytest.raises(ValueError, match=r"Could not read a checkpoint of model_dir .*"
                       + str(tmp_path.name) + r".*keep_checkpoint_max"):
        _checkpoint.reading_newest(str(tmp_path), always_outpaced)
    assert tried == [f"model.ckpt-{step}" for step in range(1, _checkpoint.READ_ATTEMPTS + 1)]


# ---- a real trainer and a real reader, in two processes --------------------------
_TRAINER = textwrap.dedent(
    """
    import os, sys
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, sys.argv[3])
    import keras_estimator as ke
    from tests import _models
    config = ke.RunConfig(save_checkpoints_steps=1, keep_checkpoint_max=2,
                          save_summary_steps=None, log_step_count_steps=None)
    x, y = _models.make_data()
    estimator = ke.Estimator(_models.mlp_model_fn, model_dir=sys.argv[1],
                             params={"hidden": [4]}, config=config)
    estimator.train(_models.input_fn(x, y), max_steps=int(sys.argv[2]))
    """
)


def _race(tmp_path, seconds, max_steps):
    model_dir = tmp_path / "model"
    root = str(Path(__file__).parents[2])
    trainer = subprocess.Popen(
        [sys.executable, "-c", _TRAINER, str(model_dir), str(max_steps), root],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    reader = _estimator(model_dir)
    evaluations, failures, steps = 0, [], []
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and trainer.poll() is None:
            if _checkpoint.latest(str(model_dir)) is None:
                time.sleep(0.05)
                continue
            try:
                steps.append(reader.evaluate(_eval_input(), steps=1)["global_step"])
            except Exception as error:  # noqa: BLE001 - every failure counts
                failures.append(f"{type(error).__name__}: {error}"[:300])
            evaluations += 1
    finally:
        trainer.kill()
        _, stderr = trainer.communicate(timeout=60)
    return evaluations, failures, steps, stderr


def test_a_reader_racing_a_trainer_saving_every_step(tmp_path):
    evaluations, failures, steps, stderr = _race(tmp_path, seconds=25, max_steps=100000)
    print(f"{evaluations} evaluations, steps {steps[0]}..{steps[-1]}")
    assert evaluations >= 20, stderr[-2000:]
    assert failures == []
    # Each evaluation read a checkpoint no older than the one before it.
    assert steps == sorted(steps) and steps[-1] > steps[0]


@pytest.mark.slow
def test_a_reader_racing_a_trainer_for_minutes(tmp_path):
    evaluations, failures, steps, stderr = _race(tmp_path, seconds=300, max_steps=10**7)
    assert evaluations >= 500, stderr[-2000:]
    assert failures == []
    assert steps == sorted(steps)


@pytest.mark.parametrize("pruned", ["model.ckpt-4.", "model.ckpt-4.data"])
def test_the_evaluator_task_goes_on_to_the_newest(four_and_six, tmp_path, monkeypatch, pruned):
    from keras_estimator._src.training import cluster

    model_dir = _listing_four(four_and_six, tmp_path)
    tried = _prune_at_first_read(monkeypatch, model_dir, pruned)
    x, y = _models.make_data()
    metrics, _ = cluster.run_evaluator(
        _estimator(model_dir),
        ke.TrainSpec(_models.input_fn(x, y), max_steps=6),
        ke.EvalSpec(_eval_input(), steps=None, throttle_secs=0, start_delay_secs=0),
        timeout_secs=5,
    )
    assert tried == ["model.ckpt-4"]
    assert metrics["global_step"] == 6
