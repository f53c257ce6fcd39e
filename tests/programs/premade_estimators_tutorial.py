"""TensorFlow's premade-estimators tutorial, as published.

Iris from CSV through pandas, DNNClassifier on numeric feature columns,
train, evaluate, then predict on a dict of Python floats. Local data: the
bundled iris.csv (same layout as the tutorial's iris_training.csv), split
into the tutorial's 120 training and 30 test rows; 1000 steps, not 5000.
"""

import json
import os

import pandas as pd
import tensorflow as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

CSV_COLUMN_NAMES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth", "Species"]
SPECIES = ["Setosa", "Versicolor", "Virginica"]

iris = pd.read_csv(os.path.join(DATA, "iris.csv"), names=CSV_COLUMN_NAMES, header=0)
iris = iris.sample(frac=1, random_state=0).reset_index(drop=True)
train, test = iris[:120].copy(), iris[120:].copy()

train_y = train.pop("Species")
test_y = test.pop("Species")


def input_fn(features, labels, training=True, batch_size=256):
    """An input function for training or evaluating"""
    # Convert the inputs to a Dataset.
    dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))

    # Shuffle and repeat if you are in training mode.
    if training:
        dataset = dataset.shuffle(1000).repeat()

    return dataset.batch(batch_size)


# Feature columns describe how to use the input.
my_feature_columns = []
for key in train.keys():
    my_feature_columns.append(tf.feature_column.numeric_column(key=key))

# Build a DNN with 2 hidden layers with 30 and 10 hidden nodes each.
classifier = tf.estimator.DNNClassifier(
    feature_columns=my_feature_columns,
    # Two hidden layers of 30 and 10 nodes respectively.
    hidden_units=[30, 10],
    # The model must choose between 3 classes.
    n_classes=3,
)

# Train the Model.
classifier.train(input_fn=lambda: input_fn(train, train_y, training=True), steps=1000)

eval_result = classifier.evaluate(input_fn=lambda: input_fn(test, test_y, training=False))

print("\nTest set accuracy: {accuracy:0.3f}\n".format(**eval_result))

# Generate predictions from the model
expected = ["Setosa", "Versicolor", "Virginica"]
predict_x = {
    "SepalLength": [5.1, 5.9, 6.9],
    "SepalWidth": [3.3, 3.0, 3.1],
    "PetalLength": [1.7, 4.2, 5.4],
    "PetalWidth": [0.5, 1.5, 2.1],
}


def input_fn(features, batch_size=256):  # noqa: F811 (the tutorial redefines it)
    """An input function for prediction."""
    # Convert the inputs to a Dataset without labels.
    return tf.data.Dataset.from_tensor_slices(dict(features)).batch(batch_size)


predictions = classifier.predict(input_fn=lambda: input_fn(predict_x))

predicted = []
for pred_dict, expec in zip(predictions, expected):  # noqa: B905 (as published)
    class_id = pred_dict["class_ids"][0]
    probability = pred_dict["probabilities"][class_id]

    print(
        'Prediction is "{}" ({:.1f}%), expected "{}"'.format(  # noqa: UP032
            SPECIES[class_id], 100 * probability, expec
        )
    )
    predicted.append(SPECIES[class_id])

print(
    "RESULT "
    + json.dumps(
        {
            "global_step": int(eval_result["global_step"]),
            "accuracy": float(eval_result["accuracy"]),
            "loss": float(eval_result["loss"]),
            "average_loss": float(eval_result["average_loss"]),
            "eval_keys": sorted(eval_result),
            "train_feature_dtype": str(train["SepalLength"].dtype),
            "predicted": predicted,
            "expected": expected,
        },
        sort_keys=True,
    )
)
