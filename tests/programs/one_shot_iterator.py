"""An input_fn that returns `make_one_shot_iterator(dataset).get_next()`.

The TF 1.x idiom: the input_fn hands back tensors, not a Dataset. `train()`
has neither `steps` nor `max_steps`, so it runs until the data ends
(3 epochs of 100 examples in batches of 10: 30 steps).
"""

import json
import tempfile

import numpy as np
import tensorflow as tf


def make_input_fn(x, y, epochs, shuffle):
    def input_fn():
        dataset = tf.compat.v1.data.Dataset.from_tensor_slices(({"x": x}, y))
        if shuffle:
            dataset = dataset.shuffle(100, seed=4)
        dataset = dataset.repeat(epochs).batch(10)
        iterator = tf.compat.v1.data.make_one_shot_iterator(dataset)
        return iterator.get_next()

    return input_fn


def model_fn(features, labels, mode):
    logits = tf.compat.v1.layers.dense(features["x"], 2)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(
            mode, predictions={"class": tf.argmax(logits, 1)}
        )
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))
    train_op = tf.compat.v1.train.AdagradOptimizer(0.5).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops={"accuracy": accuracy}
    )


def main():
    rng = np.random.RandomState(11)
    x = rng.normal(size=(100, 2)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
    estimator = tf.estimator.Estimator(
        model_fn,
        model_dir=tempfile.mkdtemp(),
        config=tf.estimator.RunConfig(tf_random_seed=11),
    )
    estimator.train(make_input_fn(x, y, epochs=3, shuffle=True))
    after_first = int(estimator.get_variable_value("global_step"))
    estimator.train(make_input_fn(x, y, epochs=1, shuffle=True))
    metrics = estimator.evaluate(make_input_fn(x, y, epochs=1, shuffle=False))
    predictions = list(estimator.predict(make_input_fn(x, y, epochs=1, shuffle=False)))
    result = {
        "global_step_after_first_train": after_first,
        "global_step": int(metrics["global_step"]),
        "accuracy": round(float(metrics["accuracy"]), 3),
        "num_predictions": len(predictions),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
