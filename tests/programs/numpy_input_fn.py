"""`tf.compat.v1.estimator.inputs.numpy_input_fn` for train, eval and predict.

Wine data as numpy arrays: a shuffled endless train input, a one-epoch eval
input whose last batch is partial, and a features-only predict input.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def model_fn(features, labels, mode, params):
    net = tf.concat([features["alcohol"][:, None], features["rest"]], axis=1)
    net = tf.compat.v1.layers.dense(net, 32, activation=tf.nn.relu)
    logits = tf.compat.v1.layers.dense(net, params["n_classes"])
    classes = tf.argmax(logits, 1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(
            mode,
            predictions={"class_ids": classes, "probabilities": tf.nn.softmax(logits)},
        )
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    metrics = {"accuracy": tf.compat.v1.metrics.accuracy(labels, classes)}
    train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops=metrics
    )


def main():
    rows = np.loadtxt(os.path.join(DATA, "wine_data.csv"), delimiter=",", skiprows=1)
    rows = rows[np.random.RandomState(2).permutation(len(rows))]
    features = rows[:, :13]
    features = ((features - features.mean(axis=0)) / features.std(axis=0)).astype(
        np.float32
    )
    labels = rows[:, 13].astype(np.int32)
    train = {"alcohol": features[:138, 0], "rest": features[:138, 1:]}
    test = {"alcohol": features[138:, 0], "rest": features[138:, 1:]}

    train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x=train, y=labels[:138], batch_size=32, num_epochs=None, shuffle=True
    )
    eval_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x=test, y=labels[138:], batch_size=16, num_epochs=1, shuffle=False
    )
    predict_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x=test, num_epochs=1, shuffle=False
    )
    estimator = tf.estimator.Estimator(
        model_fn,
        model_dir=tempfile.mkdtemp(),
        params={"n_classes": 3},
        config=tf.estimator.RunConfig(tf_random_seed=2),
    )
    estimator.train(train_input_fn, steps=100)
    metrics = estimator.evaluate(eval_input_fn)
    predictions = list(estimator.predict(predict_input_fn))
    predicted = np.array([p["class_ids"] for p in predictions])
    result = {
        "global_step": int(metrics["global_step"]),
        "accuracy": round(float(metrics["accuracy"]), 4),
        "num_predictions": len(predictions),
        "predict_accuracy": round(float((predicted == labels[138:]).mean()), 4),
        "num_test": int(len(labels) - 138),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
