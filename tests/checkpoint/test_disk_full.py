"""A checkpoint save that does not fit on the disk.

TensorFlow stops training with `ResourceExhaustedError ... No space left on
device [Op:SaveV2]`. The error keeps its type and says what remains: the
model_dir, the checkpoint that is still the latest, the steps lost and the
fix; the failed save's files are removed, so the model_dir stays clean and
training resumes from that checkpoint once there is space. A small tmpfs
when mounting is allowed here (root), and a write that fails in any case.
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from tests import _models
from tests.checkpoint.test_model_dir_faults import assert_state_names_existing_files


def _estimator(model_dir, hidden):
    config = ke.RunConfig(
        save_checkpoints_steps=2,
        keep_checkpoint_max=5,
        save_summary_steps=None,
        log_step_count_steps=None,
    )
    return ke.Estimator(
        _models.mlp_model_fn, model_dir=str(model_dir), config=config, params={"hidden": hidden}
    )


def _train_input():
    x, y = _models.make_data()
    return _models.input_fn(x, y)


def _checkpoint_files(model_dir):
    return sorted(n for n in os.listdir(model_dir) if n.startswith("model.ckpt"))


class _Listener(ke.CheckpointSaverListener):
    def __init__(self):
        self.calls = []

    def before_save(self, session, global_step_value):
        self.calls.append(("before_save", global_step_value))

    def after_save(self, session, global_step_value):
        self.calls.append(("after_save", global_step_value))


def test_a_save_that_does_not_fit_names_what_remains(tmp_path, monkeypatch):
    model_dir = tmp_path / "model"
    original = _checkpoint._reached

    def disk_full_at_step_6(stage):
        if stage == "temp_written" and any(
            n.startswith("model.ckpt-6_temp") for n in os.listdir(model_dir)
        ):
            raise tf.errors.ResourceExhaustedError(
                None, None, f"{model_dir}/model.ckpt-6_temp; No space left on device"
            )
        original(stage)

    monkeypatch.setattr(_checkpoint, "_reached", disk_full_at_step_6)
    listener = _Listener()
    estimator = _estimator(model_dir, [4])
    # Was TensorFlow's bare "No space left on device", naming neither what
    # remains nor how much was lost.
    with pytest.raises(
        tf.errors.ResourceExhaustedError,
        match=re.escape(f"Could not save checkpoint model.ckpt-6 in model_dir '{model_dir}'")
        + r": the disk is full \(.*No space left on device\)\. The latest checkpoint "
        + re.escape(f"remains {model_dir}/model.ckpt-4")
        + r"; the 2 steps since it \(up to step 6\) are lost\. Free space",
    ):
        estimator.train(_train_input(), steps=10, saving_listeners=[listener])
    assert listener.calls[-1] == ("before_save", 6)
    # The failed save's temp files are gone; the state file names step 4.
    assert _checkpoint_files(model_dir) == [
        f"model.ckpt-{s}.{part}" for s in (0, 2, 4) for part in ("data-00000-of-00001", "index")
    ]
    assert_state_names_existing_files(model_dir)
    monkeypatch.undo()
    _estimator(model_dir, [4]).train(_train_input(), steps=2)
    assert _checkpoint.step_of(_checkpoint.latest(str(model_dir))) == 6


def test_other_write_errors_pass_unchanged(tmp_path, monkeypatch):
    def denied(stage):
        if stage == "temp_written":
            raise tf.errors.PermissionDeniedError(None, None, "Permission denied")

    monkeypatch.setattr(_checkpoint, "_reached", denied)
    with pytest.raises(tf.errors.PermissionDeniedError, match=r"^Permission denied$"):
        _checkpoint.save(
            {"v": tf.Variable(1.0)}, str(tmp_path), 1, _checkpoint.RetentionPolicy()
        )


@pytest.fixture
def small_filesystem(tmp_path):
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount_point)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode()[:200]}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)


def test_a_full_filesystem_stops_training_cleanly_and_resumes(small_filesystem):
    model_dir = small_filesystem / "model"
    hidden = [300, 300]  # about 1.1 MB per checkpoint with Adam's slots
    with pytest.raises(tf.errors.ResourceExhaustedError) as raised:
        _estimator(model_dir, hidden).train(_train_input(), steps=20)
    message = str(raised.value)
    found = re.search(r"Could not save checkpoint model\.ckpt-(\d+) in model_dir .*The "
                      r"latest checkpoint remains .*model\.ckpt-(\d+); the (\d+) steps", message)
    assert found, message
    failed, kept, lost = map(int, found.groups())
    assert failed - kept == lost == 2
    assert _checkpoint.step_of(_checkpoint.latest(str(model_dir))) == kept
    assert not [n for n in os.listdir(model_dir) if "_temp" in n or ".tmp-" in n]
    assert_state_names_existing_files(model_dir)
    # Space freed: training resumes from the kept checkpoint.
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_filesystem)], check=True)
    _estimator(model_dir, hidden).train(_train_input(), steps=2)
    assert _checkpoint.step_of(_checkpoint.latest(str(model_dir))) == kept + 2
