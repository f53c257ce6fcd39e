"""TensorFlow's metrics and optimizers migration guide, its TF1 Estimator cell.

The model_fn returns `tf.nn.sparse_softmax_cross_entropy_with_logits` (one
value per example, batches of 1) as the loss, which tf.estimator reshaped to
a scalar, and v1 accuracy, precision and recall as eval_metric_ops.
"""

import json

import tensorflow as tf
import tensorflow.compat.v1 as tf1

features = [[1.0, 1.5], [2.0, 2.5], [3.0, 3.5]]
labels = [0, 0, 1]
eval_features = [[4.0, 4.5], [5.0, 5.5], [6.0, 6.5]]
eval_labels = [0, 1, 1]


def _input_fn():
    return tf1.data.Dataset.from_tensor_slices((features, labels)).batch(1)


def _eval_input_fn():
    return tf1.data.Dataset.from_tensor_slices((eval_features, eval_labels)).batch(1)


def _model_fn(features, labels, mode):
    logits = tf1.layers.Dense(2)(features)
    predictions = tf.math.argmax(input=logits, axis=1)
    loss = tf1.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    optimizer = tf1.train.AdagradOptimizer(0.05)
    train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
    accuracy = tf1.metrics.accuracy(labels=labels, predictions=predictions)
    precision = tf1.metrics.precision(labels=labels, predictions=predictions)
    recall = tf1.metrics.recall(labels=labels, predictions=predictions)

    return tf1.estimator.EstimatorSpec(
        mode,
        predictions=predictions,
        loss=loss,
        train_op=train_op,
        eval_metric_ops={"accuracy": accuracy, "precision": precision, "recall": recall},
    )


estimator = tf1.estimator.Estimator(model_fn=_model_fn)
_ = estimator.train(_input_fn)

result = estimator.evaluate(_eval_input_fn)
print(result)
print(
    "RESULT "
    + json.dumps(
        {
            "global_step": int(result["global_step"]),
            "eval_keys": sorted(result),
            "accuracy": float(result["accuracy"]),
            "loss": float(result["loss"]),
        },
        sort_keys=True,
    )
)
