"""Early stopping with `tf.estimator.experimental.stop_if_no_decrease_hook`.

As in the hook's docstring: the hook watches evaluations written by
`train_and_evaluate`, and training stops once the eval loss has not decreased
for `max_steps_without_decrease` steps. The learning rate is far too large,
so the eval loss stops improving early.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf


def model_fn(features, labels, mode):
    output = tf.compat.v1.layers.dense(features["x"], 1)
    loss = tf.compat.v1.losses.mean_squared_error(labels, output)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
    rng = np.random.RandomState(5)
    x = rng.normal(size=(200, 4)).astype(np.float32)
    y = (x.sum(axis=1, keepdims=True) + rng.normal(scale=2.0, size=(200, 1))).astype(
        np.float32
    )

    def train_input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x": x[:160]}, y[:160]))
        return ds.shuffle(160, seed=2).repeat().batch(4)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x[160:]}, y[160:])).batch(40)

    config = tf.estimator.RunConfig(
        model_dir=tempfile.mkdtemp(), tf_random_seed=5, save_checkpoints_steps=10
    )
    estimator = tf.estimator.Estimator(model_fn, config=config)
    os.makedirs(estimator.eval_dir())
    early_stopping = tf.estimator.experimental.stop_if_no_decrease_hook(
        estimator,
        metric_name="loss",
        max_steps_without_decrease=30,
        min_steps=20,
        run_every_secs=None,
        run_every_steps=10,
    )
    max_steps = 2000
    tf.estimator.train_and_evaluate(
        estimator,
        train_spec=tf.estimator.TrainSpec(
            train_input_fn, max_steps=max_steps, hooks=[early_stopping]
        ),
        eval_spec=tf.estimator.EvalSpec(eval_input_fn, steps=None, throttle_secs=0),
    )
    global_step = int(estimator.get_variable_value("global_step"))
    result = {
        "global_step": global_step,
        "max_steps": max_steps,
        "stopped_early": global_step < max_steps,
        "eval_events": len(
            tf.io.gfile.glob(os.path.join(estimator.eval_dir(), "*tfevents*"))
        )
        > 0,
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
