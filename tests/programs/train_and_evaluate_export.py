"""`tf.estimator.train_and_evaluate` with exporters, then serving the export.

TrainSpec/EvalSpec with a LatestExporter and a BestExporter on a parsing
serving input (tf.Example protos); the latest export is loaded back with
`tf.saved_model.load` and its `serving_default` signature is called on
serialized examples, as TF Serving would.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


def load_iris():
    rows = np.loadtxt(os.path.join(DATA, "iris.csv"), delimiter=",", skiprows=1)
    rows = rows[np.random.RandomState(0).permutation(len(rows))].astype(np.float32)
    x = {name: rows[:, i] for i, name in enumerate(FEATURES)}
    return x, rows[:, 4].astype(np.int64)


def model_fn(features, labels, mode):
    net = tf.stack([features[name] for name in FEATURES], axis=1)
    net = tf.compat.v1.layers.dense(net, 10, activation=tf.nn.relu)
    logits = tf.compat.v1.layers.dense(net, 3)
    probabilities = tf.nn.softmax(logits)
    classes = tf.argmax(logits, 1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {"class_ids": classes, "probabilities": probabilities}
        export_outputs = {
            "serving_default": tf.estimator.export.PredictOutput(predictions),
            "classification": tf.estimator.export.ClassificationOutput(
                scores=probabilities,
                classes=tf.constant([["setosa", "versicolor", "virginica"]]),
            ),
        }
        return tf.estimator.EstimatorSpec(
            mode, predictions=predictions, export_outputs=export_outputs
        )
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    metrics = {"accuracy": tf.compat.v1.metrics.accuracy(labels, classes)}
    train_op = tf.compat.v1.train.AdamOptimizer(0.05).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops=metrics
    )


def main():
    x, y = load_iris()
    train_x = {k: v[:120] for k, v in x.items()}
    test_x = {k: v[120:] for k, v in x.items()}

    def train_input_fn():
        ds = tf.data.Dataset.from_tensor_slices((train_x, y[:120]))
        return ds.shuffle(120, seed=6).repeat().batch(20)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices((test_x, y[120:])).batch(30)

    feature_spec = {name: tf.io.FixedLenFeature([], tf.float32) for name in FEATURES}
    serving_input_receiver_fn = (
        tf.estimator.export.build_parsing_serving_input_receiver_fn(feature_spec)
    )
    config = tf.estimator.RunConfig(
        model_dir=tempfile.mkdtemp(), tf_random_seed=6, save_checkpoints_steps=100
    )
    estimator = tf.estimator.Estimator(model_fn, config=config)
    latest = tf.estimator.LatestExporter(
        "latest", serving_input_receiver_fn, exports_to_keep=2
    )
    best = tf.estimator.BestExporter(
        name="best",
        serving_input_receiver_fn=serving_input_receiver_fn,
        exports_to_keep=1,
    )
    train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=300)
    eval_spec = tf.estimator.EvalSpec(
        eval_input_fn, steps=None, exporters=[latest, best], throttle_secs=0
    )
    metrics, export_results = tf.estimator.train_and_evaluate(
        estimator, train_spec, eval_spec
    )

    export_base = os.path.join(estimator.model_dir, "export")
    latest_dirs = sorted(tf.io.gfile.listdir(os.path.join(export_base, "latest")))
    best_dirs = sorted(tf.io.gfile.listdir(os.path.join(export_base, "best")))
    newest = os.path.join(export_base, "latest", latest_dirs[-1].strip("/"))
    loaded = tf.saved_model.load(newest)
    serialized = [
        tf.train.Example(
            features=tf.train.Features(
                feature={
                    name: tf.train.Feature(
                        float_list=tf.train.FloatList(value=[test_x[name][i]])
                    )
                    for name in FEATURES
                }
            )
        ).SerializeToString()
        for i in range(30)
    ]
    served = loaded.signatures["serving_default"](examples=tf.constant(serialized))
    served_classes = served["class_ids"].numpy()
    predicted = np.array([p["class_ids"] for p in estimator.predict(eval_input_fn)])
    result = {
        "global_step": int(metrics["global_step"]),
        "accuracy": round(float(metrics["accuracy"]), 4),
        "num_latest_exports": len(latest_dirs),
        "num_best_exports": len(best_dirs),
        "export_results": len(export_results),
        "signature_keys": sorted(loaded.signatures.keys()),
        "served_output_keys": sorted(served),
        "served_accuracy": round(float((served_classes == y[120:]).mean()), 4),
        "served_equals_predict": bool((served_classes == predicted).all()),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
