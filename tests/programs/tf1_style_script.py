"""A TF1-style script: `import tensorflow.compat.v1 as tf` and
`tf.disable_v2_behavior()`, then tf.estimator, tf.layers, tf.train optimizers,
tf.metrics and tf.estimator.inputs as in TF 1.x tutorials.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def cnn_free_model_fn(features, labels, mode, params):
    input_layer = tf.feature_column.input_layer(features, params["feature_columns"])
    dense = tf.layers.dense(inputs=input_layer, units=32, activation=tf.nn.relu)
    dropout = tf.layers.dropout(
        inputs=dense, rate=0.2, training=mode == tf.estimator.ModeKeys.TRAIN
    )
    logits = tf.layers.dense(inputs=dropout, units=3)
    predictions = {
        "classes": tf.argmax(input=logits, axis=1),
        "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
    }
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        optimizer = tf.train.MomentumOptimizer(learning_rate=0.05, momentum=0.9)
        train_op = optimizer.minimize(loss=loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)
    eval_metric_ops = {
        "accuracy": tf.metrics.accuracy(
            labels=labels, predictions=predictions["classes"]
        ),
        "mean_per_class_accuracy": tf.metrics.mean_per_class_accuracy(
            labels=labels, predictions=predictions["classes"], num_classes=3
        ),
    }
    return tf.estimator.EstimatorSpec(
        mode=mode, loss=loss, eval_metric_ops=eval_metric_ops
    )


def main(unused_argv):
    rows = np.loadtxt(os.path.join(DATA, "wine_data.csv"), delimiter=",", skiprows=1)
    rows = rows[np.random.RandomState(4).permutation(len(rows))]
    x = rows[:, :13]
    x = ((x - x.mean(axis=0)) / x.std(axis=0)).astype(np.float32)
    y = rows[:, 13].astype(np.int32)
    feature_columns = [tf.feature_column.numeric_column("x", shape=[13])]
    classifier = tf.estimator.Estimator(
        model_fn=cnn_free_model_fn,
        model_dir=tempfile.mkdtemp(),
        params={"feature_columns": feature_columns},
        config=tf.estimator.RunConfig(tf_random_seed=4),
    )
    tensors_to_log = {"probabilities": "softmax_tensor"}
    logging_hook = tf.train.LoggingTensorHook(tensors=tensors_to_log, every_n_iter=50)
    train_input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"x": x[:140]}, y=y[:140], batch_size=20, num_epochs=None, shuffle=True
    )
    classifier.train(input_fn=train_input_fn, steps=120, hooks=[logging_hook])
    eval_input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"x": x[140:]}, y=y[140:], num_epochs=1, shuffle=False
    )
    eval_results = classifier.evaluate(input_fn=eval_input_fn)
    predictions = list(classifier.predict(input_fn=eval_input_fn))
    result = {
        "global_step": int(eval_results["global_step"]),
        "accuracy": round(float(eval_results["accuracy"]), 4),
        "mean_per_class_accuracy": round(
            float(eval_results["mean_per_class_accuracy"]), 4
        ),
        "num_predictions": len(predictions),
        "executing_eagerly": tf.executing_eagerly(),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    tf.app.run(main)
