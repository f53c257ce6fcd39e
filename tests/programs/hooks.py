"""Training hooks as TF 2.15 users wrote them.

A LoggingTensorHook on a tensor named in model_fn, a StopAtStepHook ending an
otherwise endless `train()`, and a custom SessionRunHook that fetches the
named loss tensor and the global step after every step.
"""

import json
import tempfile

import numpy as np
import tensorflow as tf


class LossRecorderHook(tf.compat.v1.train.SessionRunHook):
    """Records (global_step, loss) after every training step."""

    def __init__(self):
        self.records = []
        self.begun = 0
        self.ended = 0

    def begin(self):
        self.begun += 1
        self._global_step = tf.compat.v1.train.get_global_step()

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs(
            {"loss": "mean_squared_loss:0", "step": self._global_step}
        )

    def after_run(self, run_context, run_values):
        self.records.append(
            (int(run_values.results["step"]), float(run_values.results["loss"]))
        )

    def end(self, session):
        self.ended += 1


def model_fn(features, labels, mode):
    hidden = tf.compat.v1.layers.dense(features["x"], 8, activation=tf.nn.tanh)
    output = tf.compat.v1.layers.dense(hidden, 1)
    loss = tf.compat.v1.losses.mean_squared_error(labels, output)
    loss = tf.identity(loss, name="mean_squared_loss")
    train_op = tf.compat.v1.train.AdamOptimizer(0.05).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    rng = np.random.RandomState(3)
    x = rng.uniform(-1, 1, size=(256, 3)).astype(np.float32)
    y = (x @ np.array([[1.5], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)

    def input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        return ds.shuffle(256, seed=0).repeat().batch(32)

    estimator = tf.estimator.Estimator(
        model_fn,
        model_dir=tempfile.mkdtemp(),
        config=tf.estimator.RunConfig(tf_random_seed=3),
    )
    recorder = LossRecorderHook()
    logging_hook = tf.compat.v1.train.LoggingTensorHook(
        {"loss": "mean_squared_loss"}, every_n_iter=25
    )
    estimator.train(
        input_fn,
        hooks=[logging_hook, tf.compat.v1.train.StopAtStepHook(num_steps=80), recorder],
    )
    # A second call: StopAtStepHook(last_step=...) counts from the checkpoint.
    estimator.train(
        input_fn, hooks=[tf.compat.v1.train.StopAtStepHook(last_step=120), recorder]
    )
    steps = [step for step, _ in recorder.records]
    losses = [loss for _, loss in recorder.records]
    result = {
        "global_step": int(estimator.get_variable_value("global_step")),
        "hook_calls": len(recorder.records),
        "begin_end": [recorder.begun, recorder.ended],
        "first_steps": steps[:3],
        "last_step_seen": steps[-1],
        "first_loss_gt_last": losses[0] > losses[-1],
        "final_loss": round(float(np.mean(losses[-10:])), 3),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
