"""RunConfig checkpoint policy, warm starting, and predict's options.

RunConfig(save_checkpoints_steps=20, keep_checkpoint_max=2); a second
Estimator warm-starts its dense layers from the first one's model_dir
(WarmStartSettings with a regex) and from a directory (warm_start_from=str);
predict with `predict_keys` and `yield_single_examples=False`.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def model_fn(features, labels, mode, params):
    net = tf.compat.v1.layers.dense(
        features["x"], 16, activation=tf.nn.relu, name="hidden"
    )
    logits = tf.compat.v1.layers.dense(net, 3, name="logits")
    predictions = {
        "class_ids": tf.argmax(logits, 1),
        "probabilities": tf.nn.softmax(logits),
        "logits": logits,
    }
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    metrics = {
        "accuracy": tf.compat.v1.metrics.accuracy(labels, predictions["class_ids"])
    }
    train_op = tf.compat.v1.train.GradientDescentOptimizer(
        params["learning_rate"]
    ).minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops=metrics
    )


def main():
    rows = np.loadtxt(os.path.join(DATA, "iris.csv"), delimiter=",", skiprows=1)
    rows = rows[np.random.RandomState(0).permutation(len(rows))]
    x = rows[:, :4].astype(np.float32)
    y = rows[:, 4].astype(np.int32)

    def train_input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x": x[:120]}, y[:120]))
        return ds.shuffle(120, seed=5).repeat().batch(12)

    def test_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x[120:]}, y[120:])).batch(8)

    config = tf.estimator.RunConfig(
        tf_random_seed=5, save_checkpoints_steps=20, keep_checkpoint_max=2
    )
    first = tf.estimator.Estimator(
        model_fn,
        model_dir=tempfile.mkdtemp(),
        params={"learning_rate": 0.05},
        config=config,
    )
    first.train(train_input_fn, steps=400)
    first_metrics = first.evaluate(test_input_fn)
    state = tf.train.get_checkpoint_state(first.model_dir)
    kept = [os.path.basename(p) for p in state.all_model_checkpoint_paths]

    # learning_rate 0: the warm-started model keeps the first model's weights.
    settings = tf.estimator.WarmStartSettings(
        ckpt_to_initialize_from=first.model_dir, vars_to_warm_start="hidden.*|logits.*"
    )
    second = tf.estimator.Estimator(
        model_fn,
        model_dir=tempfile.mkdtemp(),
        params={"learning_rate": 0.0},
        config=tf.estimator.RunConfig(tf_random_seed=6),
        warm_start_from=settings,
    )
    second.train(train_input_fn, steps=5)
    second_metrics = second.evaluate(test_input_fn)
    third = tf.estimator.Estimator(
        model_fn,
        model_dir=tempfile.mkdtemp(),
        params={"learning_rate": 0.0},
        config=tf.estimator.RunConfig(tf_random_seed=7),
        warm_start_from=first.model_dir,
    )
    third.train(train_input_fn, steps=1)
    same_kernel = np.allclose(
        third.get_variable_value("hidden/kernel"),
        first.get_variable_value("hidden/kernel"),
    )

    batches = list(
        first.predict(
            test_input_fn, predict_keys=["class_ids"], yield_single_examples=False
        )
    )
    singles = list(first.predict(test_input_fn, predict_keys="probabilities"))
    result = {
        "global_step": int(first_metrics["global_step"]),
        "kept_checkpoints": kept,
        "accuracy": round(float(first_metrics["accuracy"]), 4),
        "warm_started_accuracy": round(float(second_metrics["accuracy"]), 4),
        "warm_started_loss_equal": abs(
            float(second_metrics["loss"]) - float(first_metrics["loss"])
        )
        < 1e-5,
        "warm_started_global_step": int(second_metrics["global_step"]),
        "warm_start_dir_same_kernel": bool(same_kernel),
        "num_batches": len(batches),
        "batch_sizes": [len(b["class_ids"]) for b in batches],
        "batch_keys": sorted(batches[0]),
        "num_single_predictions": len(singles),
        "single_keys": sorted(singles[0]),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
