"""The feature-column Estimator cells of TensorFlow's "Migrate feature columns" guide.

site/en/guide/migrate/migrating_feature_columns.ipynb (tensorflow/docs),
"Complete training example, with feature columns": a DNNClassifier
(hidden_units=[1]) over an indicator of an identity column, an embedding of
a vocabulary-list column with one OOV bucket, and a numeric column with a
normalizer_fn lambda, trained without steps on 3 examples in batches of 1,
then `next(estimator.predict(...))` on one example whose 'size' is out of
the vocabulary.

Changes from the guide: none to its code. The RESULT line records the
trained model's variables and the prediction's keys and shapes.
"""

import json
import math

import tensorflow as tf  # noqa: F401  (the guide imports it)
import tensorflow.compat.v1 as tf1

features = {
    'type': [0, 1, 1],
    'size': ['small', 'small', 'medium'],
    'weight': [2.7, 1.8, 1.6],
}
labels = [1, 1, 0]
predict_features = {'type': [0], 'size': ['foo'], 'weight': [-0.7]}

vocab = ['small', 'medium', 'large']
one_hot_dims = 3
embedding_dims = 4
weight_mean = 2.0
weight_variance = 1.0

categorical_col = tf1.feature_column.categorical_column_with_identity(
    'type', num_buckets=one_hot_dims)
# Convert index to one-hot; e.g., [2] -> [0,0,1].
indicator_col = tf1.feature_column.indicator_column(categorical_col)

# Convert strings to indices; e.g., ['small'] -> [1].
vocab_col = tf1.feature_column.categorical_column_with_vocabulary_list(
    'size', vocabulary_list=vocab, num_oov_buckets=1)
# Embed the indices.
embedding_col = tf1.feature_column.embedding_column(vocab_col, embedding_dims)

normalizer_fn = lambda x: (x - weight_mean) / math.sqrt(weight_variance)  # noqa: E731
# Normalize the numeric inputs; e.g., [2.0] -> [0.0].
numeric_col = tf1.feature_column.numeric_column(
    'weight', normalizer_fn=normalizer_fn)

estimator = tf1.estimator.DNNClassifier(
    feature_columns=[indicator_col, embedding_col, numeric_col],
    hidden_units=[1])

def _input_fn():
  return tf1.data.Dataset.from_tensor_slices((features, labels)).batch(1)

estimator.train(_input_fn)

def _predict_fn():
  return tf1.data.Dataset.from_tensor_slices(predict_features).batch(1)

prediction = next(estimator.predict(_predict_fn))
print(prediction)

names = estimator.get_variable_names()
result = {
    "global_step": int(estimator.get_variable_value("global_step")),
    "variables": {
        name: list(estimator.get_variable_value(name).shape)
        for name in names
        if not name.endswith("Adagrad") and name != "global_step"
    },
    "prediction": {key: [str(value.dtype), list(value.shape)] for key, value in prediction.items()},
    "class_id": int(prediction["class_ids"][0]),
    "probabilities_sum": float(prediction["probabilities"].sum()),
    "probability_of_1": float(prediction["probabilities"][1]),
}
print("RESULT " + json.dumps(result, sort_keys=True))
