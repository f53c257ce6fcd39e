"""`Estimator.export_saved_model` with raw and hand-written serving inputs.

A regression model on generated data, a CheckpointSaverListener counting
saves, `evaluation_hooks` in the EstimatorSpec, then two exports: one from
`build_raw_serving_input_receiver_fn`, one from a serving_input_receiver_fn
returning `ServingInputReceiver` with a placeholder; both are loaded with
`tf.saved_model.load` and called.
"""

import json
import tempfile

import numpy as np
import tensorflow as tf


class SaveCounter(tf.estimator.CheckpointSaverListener):
    def __init__(self):
        self.saved_steps = []

    def after_save(self, session, global_step_value):
        self.saved_steps.append(int(global_step_value))


class EvalStepCounter(tf.estimator.SessionRunHook):
    def __init__(self):
        self.steps = 0

    def after_run(self, run_context, run_values):
        self.steps += 1


EVAL_COUNTER = EvalStepCounter()


def model_fn(features, labels, mode):
    net = tf.compat.v1.layers.dense(features["x"], 16, activation=tf.nn.relu)
    output = tf.squeeze(tf.compat.v1.layers.dense(net, 1), axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(
            mode,
            predictions={"y": output},
            export_outputs={
                "predict": tf.estimator.export.PredictOutput({"y": output})
            },
        )
    loss = tf.compat.v1.losses.mean_squared_error(labels, output)
    metrics = {"mae": tf.compat.v1.metrics.mean_absolute_error(labels, output)}
    train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(
        mode,
        loss=loss,
        train_op=train_op,
        eval_metric_ops=metrics,
        evaluation_hooks=[EVAL_COUNTER],
    )


def main():
    rng = np.random.RandomState(12)
    x = rng.uniform(-2, 2, size=(400, 5)).astype(np.float32)
    y = (np.sin(x[:, 0]) + x[:, 1] * x[:, 2] - 0.5 * x[:, 3]).astype(np.float32)

    def train_input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x": x[:320]}, y[:320]))
        return ds.shuffle(320, seed=12).repeat().batch(32)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x[320:]}, y[320:])).batch(20)

    config = tf.estimator.RunConfig(tf_random_seed=12, save_checkpoints_steps=100)
    estimator = tf.estimator.Estimator(
        model_fn, model_dir=tempfile.mkdtemp(), config=config
    )
    listener = SaveCounter()
    estimator.train(train_input_fn, steps=300, saving_listeners=[listener])
    metrics = estimator.evaluate(eval_input_fn)

    # Only dtype and the shape after the batch dimension are taken from these.
    raw_fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.zeros([1, 5], tf.float32)}
    )

    def serving_input_receiver_fn():
        inputs = tf.compat.v1.placeholder(tf.float32, [None, 5], name="inputs")
        return tf.estimator.export.ServingInputReceiver(
            {"x": inputs}, {"inputs": inputs}
        )

    base = tempfile.mkdtemp()
    raw_dir = estimator.export_saved_model(base, raw_fn)
    custom_dir = estimator.export_saved_model(base, serving_input_receiver_fn)
    raw = tf.saved_model.load(raw_dir)
    custom = tf.saved_model.load(custom_dir)
    raw_out = raw.signatures["serving_default"](x=tf.constant(x[320:]))
    custom_out = custom.signatures["serving_default"](inputs=tf.constant(x[320:]))
    predicted = np.array([p["y"] for p in estimator.predict(eval_input_fn)])
    served = raw_out["y"].numpy().reshape(-1)
    result = {
        "global_step": int(metrics["global_step"]),
        "mae": round(float(metrics["mae"]), 3),
        "label_std": round(float(y[320:].std()), 3),
        "saved_steps": listener.saved_steps,
        "eval_hook_steps": EVAL_COUNTER.steps,
        "raw_signature_keys": sorted(raw.signatures.keys()),
        "custom_signature_keys": sorted(custom.signatures.keys()),
        "raw_output_keys": sorted(raw_out),
        "served_matches_predict": bool(np.allclose(served, predicted, atol=1e-5)),
        "custom_matches_raw": bool(
            np.allclose(custom_out["y"].numpy().reshape(-1), served, atol=1e-5)
        ),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
