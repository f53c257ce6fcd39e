"""BackupAndRestore in Estimator.train: a SIGKILLed process resumes from the backup.

Each training process is a child of its own (`_backup_child.py`), killed
with SIGKILL (no handler, no final checkpoint) after 13 steps, when the
backup (every 5 steps) holds step 10 and model_dir only step 0. The restart
resumes at step 10 and runs the 10 steps left, ending with the weights of
an uninterrupted run: every step sees the same full batch.
"""

import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

CHILD = Path(__file__).parent / "_backup_child.py"


def _run(*args):
    return subprocess.run(
        [sys.executable, str(CHILD), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _printed(result, key):
    for line in result.stdout.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    raise AssertionError(f"no {key!r} in the child's output:\n{result.stdout}\n{result.stderr}")


@pytest.mark.parametrize(
    "kind", ["keras", pytest.param("model_fn", marks=pytest.mark.slow)]
)
def test_sigkilled_training_resumes_from_the_backup(kind, tmp_path):
    import tensorflow as tf

    reference = _run(kind, tmp_path / "reference", tmp_path / "reference_backup", 20, 0)
    assert reference.returncode == 0, reference.stderr
    assert _printed(reference, "steps") == 20

    model_dir, backup_dir = tmp_path / "model", tmp_path / "backup"
    killed = _run(kind, model_dir, backup_dir, 20, 13)
    assert killed.returncode == -signal.SIGKILL
    assert (backup_dir / "latest.weights.h5").exists()
    assert tf.train.latest_checkpoint(str(model_dir)).endswith("model.ckpt-0")

    resumed = _run(kind, model_dir, backup_dir, 20, 0)
    assert resumed.returncode == 0, resumed.stderr
    assert _printed(resumed, "steps") == 10
    assert _printed(resumed, "global_step") == 20
    assert not backup_dir.exists()  # deleted once training completed, as in fit
    ours = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(model_dir)))
    theirs = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(tmp_path / "reference")))
    names = sorted(theirs.get_variable_to_shape_map())
    assert sorted(ours.get_variable_to_shape_map()) == names
    for name in names:
        np.testing.assert_array_equal(ours.get_tensor(name), theirs.get_tensor(name), err_msg=name)
