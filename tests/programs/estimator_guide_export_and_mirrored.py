"""TensorFlow's Estimator guide (TF 2.x), its premade-export and distribution cells.

A LinearClassifier on four points is trained, exported with a parsing
serving input, loaded with `tf.saved_model.load` and called on serialized
`tf.train.Example`s; then a LinearRegressor with `optimizer='SGD'` trains and
evaluates under `tf.distribute.MirroredStrategy` (the guide's "distributed
training" cell). As published; the guide's titanic cell (a download) is not
included.
"""

import json
import os
import tempfile

import tensorflow as tf


def main():
    input_column = tf.feature_column.numeric_column("x")
    estimator = tf.estimator.LinearClassifier(feature_columns=[input_column])

    def input_fn():
        return (
            tf.data.Dataset.from_tensor_slices(
                ({"x": [1.0, 2.0, 3.0, 4.0]}, [1, 1, 0, 0])
            )
            .repeat(200)
            .shuffle(64)
            .batch(16)
        )

    estimator.train(input_fn)

    tmpdir = tempfile.mkdtemp()
    serving_input_fn = tf.estimator.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec([input_column])
    )
    estimator_base_path = os.path.join(tmpdir, "from_estimator")
    estimator_path = estimator.export_saved_model(estimator_base_path, serving_input_fn)

    imported = tf.saved_model.load(estimator_path)

    def predict(x):
        example = tf.train.Example()
        example.features.feature["x"].float_list.value.extend([x])
        return imported.signatures["predict"](
            examples=tf.constant([example.SerializeToString()])
        )

    low = predict(1.5)
    high = predict(3.5)
    print(low)
    print(high)

    mirrored_strategy = tf.distribute.MirroredStrategy()
    config = tf.estimator.RunConfig(
        train_distribute=mirrored_strategy, eval_distribute=mirrored_strategy
    )
    regressor = tf.estimator.LinearRegressor(
        feature_columns=[tf.feature_column.numeric_column("feats")],
        optimizer="SGD",
        config=config,
    )

    def input_fn():  # noqa: F811 - the guide redefines it
        dataset = tf.data.Dataset.from_tensors(({"feats": [1.0]}, [1.0]))
        return dataset.repeat(1000).batch(10)

    regressor.train(input_fn=input_fn, steps=10)
    metrics = regressor.evaluate(input_fn=input_fn, steps=10)
    print(metrics)

    result = {
        "classifier_global_step": int(estimator.get_variable_value("global_step")),
        "prediction_keys": sorted(low.keys()),
        "probability_of_1_at_1_5": float(low["probabilities"][0][1]),
        "probability_of_1_at_3_5": float(high["probabilities"][0][1]),
        "class_ids": [int(low["class_ids"][0][0]), int(high["class_ids"][0][0])],
        "regressor_global_step": int(metrics["global_step"]),
        "regressor_loss": float(metrics["loss"]),
        "regressor_average_loss": float(metrics["average_loss"]),
        "regressor_weight": float(
            regressor.get_variable_value("linear/linear_model/feats/weights")[0][0]
        ),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
