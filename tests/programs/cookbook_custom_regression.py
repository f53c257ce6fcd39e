"""The regression cookbook's custom Estimator, as tensorflow/models wrote it.

A model_fn with `input_layer`, `tf.compat.v1.layers.dense`, the loss from
`tf.losses.mean_squared_error` (TF 2.15's lowercase alias), a total loss
reported for compatibility with the premade estimators, v1 Adam, and
`tf.compat.v1.metrics.root_mean_squared_error` on float64 predictions;
indicator and embedding columns; INFO logging turned on and the program run
through `tf.compat.v1.app.run`.

The data: automobile-like rows (curb weight, highway mpg, body style, make,
price) from a seeded generator (the program's only change: local data, few
steps).
"""

import json
import sys

import numpy as np
import tensorflow as tf

BODY_STYLES = ["hardtop", "wagon", "sedan", "hatchback", "convertible"]
MAKES = ["audi", "bmw", "honda", "toyota", "volvo", "mazda", "peugot", "saab"]


def load_data(seed=0, count=200):
    rng = np.random.RandomState(seed)
    weight = rng.uniform(1500, 4000, count)
    mpg = rng.uniform(15, 50, count)
    body = rng.choice(BODY_STYLES, count)
    make = rng.choice(MAKES, count)
    price = (
        6.0 * weight
        - 150.0 * mpg
        + np.where(body == "convertible", 6000.0, 0.0)
        + np.where(np.isin(make, ["bmw", "audi"]), 5000.0, 0.0)
        + rng.normal(0, 1000, count)
    )
    x = {"curb-weight": weight, "highway-mpg": mpg, "body-style": body, "make": make}
    split = int(count * 0.7)
    train = ({k: v[:split] for k, v in x.items()}, price[:split])
    test = ({k: v[split:] for k, v in x.items()}, price[split:])
    return train, test


def make_dataset(batch_sz, x, y=None, shuffle=False, shuffle_buffer_size=1000):
    def input_fn():
        if y is not None:
            dataset = tf.data.Dataset.from_tensor_slices((dict(x), y))
        else:
            dataset = tf.data.Dataset.from_tensor_slices(dict(x))
        if shuffle:
            dataset = dataset.shuffle(shuffle_buffer_size, seed=4).batch(batch_sz).repeat()
        else:
            dataset = dataset.batch(batch_sz)
        return dataset

    return input_fn


def my_dnn_regression_fn(features, labels, mode, params):
    top = tf.compat.v1.feature_column.input_layer(features, params["feature_columns"])
    for units in params.get("hidden_units", [20]):
        top = tf.compat.v1.layers.dense(inputs=top, units=units, activation=tf.nn.relu)
    output_layer = tf.compat.v1.layers.dense(inputs=top, units=1)
    predictions = tf.squeeze(output_layer, 1)

    if mode == tf.compat.v1.estimator.ModeKeys.PREDICT:
        return tf.compat.v1.estimator.EstimatorSpec(
            mode=mode, predictions={"price": predictions}
        )

    average_loss = tf.losses.mean_squared_error(labels, predictions)
    batch_size = tf.shape(labels)[0]
    total_loss = tf.compat.v1.to_float(batch_size) * average_loss

    if mode == tf.compat.v1.estimator.ModeKeys.TRAIN:
        optimizer = params.get("optimizer", tf.compat.v1.train.AdamOptimizer)
        optimizer = optimizer(params.get("learning_rate", None))
        train_op = optimizer.minimize(
            loss=average_loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return tf.compat.v1.estimator.EstimatorSpec(
            mode=mode, loss=total_loss, train_op=train_op
        )

    assert mode == tf.compat.v1.estimator.ModeKeys.EVAL
    predictions = tf.cast(predictions, tf.float64)
    rmse = tf.compat.v1.metrics.root_mean_squared_error(labels, predictions)
    return tf.compat.v1.estimator.EstimatorSpec(
        mode=mode, loss=total_loss, eval_metric_ops={"rmse": rmse}
    )


def main(argv):
    (train_x, train_y), (test_x, test_y) = load_data()
    price_norm_factor = 1000.0
    train_y = train_y / price_norm_factor
    test_y = test_y / price_norm_factor
    train_input_fn = make_dataset(20, train_x, train_y, True, 1000)
    test_input_fn = make_dataset(20, test_x, test_y)

    body_style = tf.feature_column.categorical_column_with_vocabulary_list(
        key="body-style", vocabulary_list=BODY_STYLES
    )
    make = tf.feature_column.categorical_column_with_hash_bucket(
        key="make", hash_bucket_size=50
    )
    feature_columns = [
        tf.feature_column.numeric_column(key="curb-weight", normalizer_fn=lambda w: w / 1000.0),
        tf.feature_column.numeric_column(key="highway-mpg", normalizer_fn=lambda m: m / 10.0),
        tf.feature_column.indicator_column(body_style),
        tf.feature_column.embedding_column(make, dimension=3),
    ]
    model = tf.estimator.Estimator(
        model_fn=my_dnn_regression_fn,
        params={
            "feature_columns": feature_columns,
            "learning_rate": 0.01,
            "optimizer": tf.compat.v1.train.AdamOptimizer,
            "hidden_units": [20, 20],
        },
        config=tf.estimator.RunConfig(tf_random_seed=3),
    )
    before = model.train(input_fn=train_input_fn, steps=1).evaluate(input_fn=test_input_fn)
    model.train(input_fn=train_input_fn, steps=399)
    eval_result = model.evaluate(input_fn=test_input_fn)
    predictions = list(model.predict(input_fn=make_dataset(20, test_x)))
    print("RMS error for the test set: ${:.0f}".format(price_norm_factor * eval_result["rmse"]))
    result = {
        "global_step": int(eval_result["global_step"]),
        "metric_keys": sorted(eval_result),
        "rmse_before": round(float(before["rmse"]), 3),
        "rmse": round(float(eval_result["rmse"]), 3),
        "label_std": round(float(np.std(test_y)), 3),
        # evaluate's loss is the mean of the batches' total (summed) losses.
        "loss_over_rmse_squared": round(
            float(eval_result["loss"]) / float(eval_result["rmse"]) ** 2, 2
        ),
        "num_predictions": len(predictions),
        "prediction_keys": sorted(predictions[0]),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    tf.compat.v1.app.run(main=main, argv=sys.argv[:1])
