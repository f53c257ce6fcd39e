"""TensorFlow's fault-tolerance migration guide, its TF1 Estimator cell.

A DNNClassifier saves a checkpoint after every step; a hook raises at its
6th run, then a second `train()` resumes from the newest checkpoint. The
guide's MNIST is replaced by the bundled 8x8 digits (64 pixels, 10 classes).
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf
import tensorflow.compat.v1 as tf1

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def load_digits():
    rows = np.loadtxt(os.path.join(DATA, "digits.csv.gz"), delimiter=",")
    return rows[:, :64].reshape(-1, 8, 8) / 16.0, rows[:, 64].astype(np.int32)


class InterruptHook(tf1.train.SessionRunHook):
    # A hook for simulating disruption
    def begin(self):
        self._step = -1

    def before_run(self, run_context):
        self._step += 1

    def after_run(self, run_context, run_values):
        if self._step == 5:
            raise RuntimeError("Interruption")


def main():
    x_train, y_train = load_digits()
    log_dir = tempfile.mkdtemp()
    feature_columns = [tf.feature_column.numeric_column("x", shape=[8, 8])]
    classifier = tf1.estimator.DNNClassifier(
        feature_columns=feature_columns,
        hidden_units=[256, 32],
        optimizer=tf1.train.AdamOptimizer(0.001),
        n_classes=10,
        dropout=0.2,
        model_dir=log_dir,
        config=tf1.estimator.RunConfig(save_checkpoints_steps=1),
    )
    train_input_fn = tf1.estimator.inputs.numpy_input_fn(
        x={"x": x_train},
        y=y_train.astype(np.int32),
        num_epochs=10,
        batch_size=50,
        shuffle=True,
    )
    error = None
    try:
        classifier.train(input_fn=train_input_fn, hooks=[InterruptHook()], max_steps=10)
    except Exception as e:
        error = f"{type(e).__name__}:{e}"
        print(error)
    checkpoints = sorted(
        int(name.split("-")[1].split(".")[0])
        for name in os.listdir(log_dir)
        if name.startswith("model.ckpt-") and name.endswith(".index")
    )
    print(f"Checkpoints: {os.listdir(log_dir)}")
    resumed_from = int(classifier.get_variable_value("global_step"))
    classifier.train(input_fn=train_input_fn, max_steps=10)
    result = {
        "error": error,
        "checkpoint_steps_after_interruption": checkpoints,
        "resumed_from_step": resumed_from,
        "global_step": int(classifier.get_variable_value("global_step")),
        "latest_checkpoint": os.path.basename(tf.train.latest_checkpoint(log_dir)),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
