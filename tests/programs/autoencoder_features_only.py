"""An autoencoder whose input_fn yields features only (no labels).

model_fn takes `(features, mode)`: `labels` is not even a parameter, as
allowed by tf.estimator. Loss is the reconstruction error; evaluation reports
it with an RMSE metric; predictions return the code and the reconstruction.
"""

import json
import tempfile

import numpy as np
import tensorflow as tf


def model_fn(features, mode, params):
    x = features["pixels"]
    code = tf.compat.v1.layers.dense(
        x, params["code_size"], activation=tf.nn.tanh, name="encoder"
    )
    reconstruction = tf.compat.v1.layers.dense(code, 8, name="decoder")
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(
            mode, predictions={"code": code, "reconstruction": reconstruction}
        )
    loss = tf.compat.v1.losses.mean_squared_error(x, reconstruction)
    metrics = {"rmse": tf.compat.v1.metrics.root_mean_squared_error(x, reconstruction)}
    train_op = tf.compat.v1.train.AdamOptimizer(0.02).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops=metrics
    )


def main():
    rng = np.random.RandomState(8)
    # 8-dimensional points on a 2-dimensional linear subspace plus a little noise.
    basis = rng.normal(size=(2, 8)).astype(np.float32)
    data = (
        rng.normal(size=(300, 2)) @ basis + 0.01 * rng.normal(size=(300, 8))
    ).astype(np.float32)

    def train_input_fn():
        ds = tf.data.Dataset.from_tensor_slices({"pixels": data[:240]})
        return ds.shuffle(240, seed=8).repeat().batch(24)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices({"pixels": data[240:]}).batch(20)

    estimator = tf.estimator.Estimator(
        model_fn,
        model_dir=tempfile.mkdtemp(),
        params={"code_size": 2},
        config=tf.estimator.RunConfig(tf_random_seed=8),
    )
    before = estimator.train(train_input_fn, steps=1).evaluate(eval_input_fn)
    estimator.train(train_input_fn, steps=199)
    metrics = estimator.evaluate(eval_input_fn)
    predictions = list(estimator.predict(eval_input_fn))
    result = {
        "global_step": int(metrics["global_step"]),
        "loss_before": round(float(before["loss"]), 4),
        "loss": round(float(metrics["loss"]), 4),
        "rmse": round(float(metrics["rmse"]), 4),
        "num_predictions": len(predictions),
        "code_shape": list(predictions[0]["code"].shape),
        "data_variance": round(float(data[240:].var()), 4),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
