"""`tf.keras.estimator.model_to_estimator` on a compiled Keras Sequential.

The Keras guide's pattern: the Sequential's first layer gets
`input_shape`, so its input is named `<first layer>_input` and the input_fn
keys its features that way.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def load_iris():
    rows = np.loadtxt(os.path.join(DATA, "iris.csv"), delimiter=",", skiprows=1)
    rows = rows[np.random.RandomState(0).permutation(len(rows))]
    return rows[:, :4].astype(np.float32), rows[:, 4].astype(np.int32)


def main():
    x, y = load_iris()
    model = tf.keras.models.Sequential(
        [
            tf.keras.layers.Dense(16, activation="relu", input_shape=(4,)),
            tf.keras.layers.Dropout(0.1),
            tf.keras.layers.Dense(3),
        ]
    )
    model.compile(
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        optimizer=tf.keras.optimizers.Adam(0.01),
        metrics=["accuracy"],
    )
    # The first layer is "dense", so Keras names the model input "dense_input".
    input_name = "dense_input"

    def input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({input_name: x[:120]}, y[:120]))
        return ds.shuffle(120, seed=2).repeat().batch(16)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(
            ({input_name: x[120:]}, y[120:])
        ).batch(30)

    model_dir = tempfile.mkdtemp()
    keras_estimator = tf.keras.estimator.model_to_estimator(
        keras_model=model,
        model_dir=model_dir,
        config=tf.estimator.RunConfig(tf_random_seed=2),
    )
    keras_estimator.train(input_fn=input_fn, steps=300)
    metrics = keras_estimator.evaluate(input_fn=eval_input_fn)
    predictions = list(keras_estimator.predict(input_fn=eval_input_fn))
    result = {
        "input_name": input_name,
        "global_step": int(metrics["global_step"]),
        "metric_keys": sorted(metrics),
        "accuracy": round(float(metrics["accuracy"]), 4),
        "num_predictions": len(predictions),
        "prediction_keys": sorted(predictions[0]),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
