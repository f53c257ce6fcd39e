"""The TF1 -> TF2 migration guide's Estimator example, as written for TF 2.15.

The model_fn builds the optimizer and `minimize(loss, global_step=...)` in
every mode and returns one EstimatorSpec; `train` runs until the dataset
ends; `evaluate` runs twice on the same checkpoint.
"""

import json
import tempfile

import tensorflow.compat.v1 as tf1

features = [[1.0, 1.5], [2.0, 2.5], [3.0, 3.5]]
labels = [[0.3], [0.5], [0.7]]
eval_features = [[4.0, 4.5], [5.0, 5.5], [6.0, 6.5]]
eval_labels = [[0.8], [0.9], [1.0]]


def _input_fn():
    return tf1.data.Dataset.from_tensor_slices((features, labels)).batch(1)


def _eval_input_fn():
    return tf1.data.Dataset.from_tensor_slices((eval_features, eval_labels)).batch(1)


def _model_fn(features, labels, mode):
    logits = tf1.layers.Dense(1)(features)
    loss = tf1.losses.mean_squared_error(labels=labels, predictions=logits)
    optimizer = tf1.train.AdagradOptimizer(0.05)
    train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
    return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
    model_dir = tempfile.mkdtemp()
    config = tf1.estimator.RunConfig(tf_random_seed=1)
    estimator = tf1.estimator.Estimator(
        model_fn=_model_fn, model_dir=model_dir, config=config
    )
    estimator.train(_input_fn)
    first = estimator.evaluate(_eval_input_fn)
    second = estimator.evaluate(_eval_input_fn)
    result = {
        "global_step": int(estimator.get_variable_value("global_step")),
        "eval_global_steps": [int(first["global_step"]), int(second["global_step"])],
        "eval_losses": [
            round(float(first["loss"]), 4),
            round(float(second["loss"]), 4),
        ],
        "eval_keys": sorted(first),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
