"""Trains with keras.callbacks.BackupAndRestore in a process of its own.

Usage:
    python tests/callbacks/_backup_child.py KIND MODEL_DIR BACKUP_DIR STEPS KILL_AFTER
        KIND: `keras` (model_to_estimator) or `model_fn` (the shared MLP).
        Trains STEPS steps on one full batch repeated (every step sees the
        same data, so a resumed run can equal an uninterrupted one), with
        BackupAndRestore(BACKUP_DIR, save_freq=5). With KILL_AFTER > 0 the
        process SIGKILLs itself after that many steps. Prints `steps <n>`
        (steps this process ran) and `global_step <n>` when train() returns.
"""

import os
import signal
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_estimator as ke  # noqa: E402
from tests import _models  # noqa: E402
from tests.callbacks import _harness  # noqa: E402

CONFIG = ke.RunConfig(
    tf_random_seed=1,
    save_checkpoints_steps=10**6,
    save_summary_steps=None,
    log_step_count_steps=None,
)


def full_batch():
    data = tf.data.Dataset.from_tensor_slices(({"x": _harness.X}, _harness.Y))
    return data.batch(len(_harness.X)).repeat()


def estimator(kind, model_dir):
    if kind == "keras":
        return ke.model_to_estimator(_harness.build_model(), model_dir=model_dir, config=CONFIG)
    return ke.Estimator(
        _models.mlp_model_fn,
        model_dir=model_dir,
        config=CONFIG,
        params={"hidden": [4], "optimizer": "sgd"},
    )


class Counts(keras.callbacks.Callback):
    """Counts this process's steps; SIGKILLs it after `kill_after` of them."""

    def __init__(self, kill_after):
        super().__init__()
        self.steps = 0
        self.kill_after = kill_after

    def on_train_batch_end(self, batch, logs=None):
        self.steps += 1
        if self.steps == self.kill_after:
            os.kill(os.getpid(), signal.SIGKILL)


def main():
    kind, model_dir, backup_dir, steps, kill_after = sys.argv[1:]
    counts = Counts(int(kill_after))
    backup = keras.callbacks.BackupAndRestore(backup_dir, save_freq=5)
    trained = estimator(kind, model_dir)
    trained.train(full_batch, steps=int(steps), callbacks=[backup, counts])
    print("steps", counts.steps, flush=True)
    print("global_step", trained.get_variable_value("global_step"), flush=True)


if __name__ == "__main__":
    main()
