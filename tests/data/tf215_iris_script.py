"""Iris classification with a custom Estimator, written for TensorFlow 2.15.

A typical tf.estimator program of the TF 2.x era: a model_fn built from
tf.compat.v1 layers, losses, metrics and optimizer, numpy input functions,
a logging hook, train then evaluate. The last line printed is the test
accuracy.

Usage: python tf215_iris_script.py path/to/iris.csv
"""

import random
import sys
import tempfile

import numpy as np
import tensorflow as tf

SEED = 42
FEATURE_KEYS = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


def load_data(path):
    """Returns ((train_x, train_y), (test_x, test_y)): 120 and 30 flowers."""
    rows = np.loadtxt(path, delimiter=",", skiprows=1)
    order = np.random.RandomState(0).permutation(len(rows))
    rows = rows[order]
    x = {key: rows[:, i].astype(np.float32) for i, key in enumerate(FEATURE_KEYS)}
    y = rows[:, 4].astype(np.int32)
    train = ({key: value[:120] for key, value in x.items()}, y[:120])
    test = ({key: value[120:] for key, value in x.items()}, y[120:])
    return train, test


def model_fn(features, labels, mode, params):
    net = tf.stack([features[key] for key in FEATURE_KEYS], axis=1)
    for units in params["hidden_units"]:
        net = tf.compat.v1.layers.dense(net, units=units, activation=tf.nn.relu)
    logits = tf.compat.v1.layers.dense(net, params["n_classes"], activation=None)
    predicted_classes = tf.argmax(logits, 1)

    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {
            "class_ids": predicted_classes[:, tf.newaxis],
            "probabilities": tf.nn.softmax(logits),
            "logits": logits,
        }
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)

    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(
        labels=labels, logits=logits
    )
    accuracy = tf.compat.v1.metrics.accuracy(
        labels=labels, predictions=predicted_classes, name="acc_op"
    )
    metrics = {"accuracy": accuracy}
    tf.compat.v1.summary.scalar("accuracy", accuracy[1])

    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)

    optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate=params["learning_rate"])
    train_op = optimizer.minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    logging_hook = tf.compat.v1.train.LoggingTensorHook(
        {"loss": loss, "step": tf.compat.v1.train.get_global_step()}, every_n_iter=200
    )
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, training_hooks=[logging_hook]
    )


def main(argv):
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    # TF 2.15's legacy layers draw initial weights from Python's and numpy's
    # generators as well as from the graph seed.
    random.seed(SEED)
    np.random.seed(SEED)
    (train_x, train_y), (test_x, test_y) = load_data(argv[1])

    with tempfile.TemporaryDirectory() as model_dir:
        config = tf.estimator.RunConfig(
            model_dir=model_dir,
            tf_random_seed=SEED,
            save_checkpoints_steps=500,
            log_step_count_steps=200,
        )
        classifier = tf.estimator.Estimator(
            model_fn=model_fn,
            config=config,
            params={"hidden_units": [10, 10], "n_classes": 3, "learning_rate": 0.01},
        )

        train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
            x=train_x, y=train_y, batch_size=32, num_epochs=None, shuffle=True
        )
        classifier.train(input_fn=train_input_fn, steps=1000)

        eval_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
            x=test_x, y=test_y, batch_size=32, num_epochs=1, shuffle=False
        )
        eval_result = classifier.evaluate(input_fn=eval_input_fn)

        predict_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
            x={key: value[:3] for key, value in test_x.items()}, shuffle=False
        )
        for i, prediction in enumerate(classifier.predict(predict_input_fn)):
            class_id = prediction["class_ids"][0]
            print(
                "Prediction is {} ({:.1f}%), expected {}".format(
                    class_id, 100 * prediction["probabilities"][class_id], test_y[i]
                )
            )

    print("\nTest set accuracy: {accuracy:0.4f}".format(**eval_result))


if __name__ == "__main__":
    main(sys.argv)
