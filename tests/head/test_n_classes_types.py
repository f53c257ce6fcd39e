"""n_classes given as a numpy integer or a scalar tensor, as tf.estimator 2.15 took it.

2.15 compared n_classes with 2 only when it was a Python int and otherwise
asserted it in a TensorFlow op, so `np.int32(3)` (what `labels.max() + 1`
gives), `np.int64(2)` for a binary classifier and `tf.constant(3)` all ran
(reference venv: `MultiClassHead(tf.constant(3))`, `LinearClassifier(...,
n_classes=np.int32(3))`, `DNNClassifier(..., n_classes=np.int64(2))`,
`MultiLabelHead(np.int64(3))`). They were refused here.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke


def test_multi_class_head_takes_a_tensor_n_classes():
    """2.15's upstream test_predict_with_tensor_n_classes, re-expressed."""
    head = ke.MultiClassHead(tf.constant(3, tf.int32))
    assert head.logits_dimension == 3
    predictions = head.predictions(tf.constant([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
    np.testing.assert_allclose(
        predictions["probabilities"].numpy(),
        [[0.576117, 0.2119416, 0.2119416], [0.2119416, 0.2119416, 0.576117]],
        rtol=1e-5,
    )
    np.testing.assert_array_equal(predictions["class_ids"].numpy(), [[0], [2]])
    np.testing.assert_array_equal(predictions["classes"].numpy(), [[b"0"], [b"2"]])
    np.testing.assert_array_equal(predictions["all_classes"].numpy(), [[b"0", b"1", b"2"]] * 2)


@pytest.mark.parametrize("n_classes", [np.int32(3), np.int64(3), np.array(3)])
def test_multi_class_head_takes_numpy_integers(n_classes):
    assert ke.MultiClassHead(n_classes).logits_dimension == 3


def test_multi_label_head_takes_a_numpy_integer():
    assert ke.MultiLabelHead(np.int64(3)).logits_dimension == 3


def test_a_tensor_of_two_classes_is_refused_as_2_15_asserted():
    """2.15's assertion op failed with InvalidArgumentError."""
    with pytest.raises(tf.errors.InvalidArgumentError, match="n_classes must be greater than 2"):
        ke.MultiClassHead(tf.constant(2))
    with pytest.raises(ValueError, match="n_classes must be > 2"):
        ke.MultiClassHead(2)


@pytest.mark.parametrize(
    ("make", "n_classes", "classes"),
    [
        (ke.LinearClassifier, np.int32(3), 3),
        (ke.DNNClassifier, np.int64(2), 2),
    ],
)
def test_canned_classifiers_train_with_numpy_n_classes(tmp_path, make, n_classes, classes):
    columns = [tf.feature_column.numeric_column("x")]
    kwargs = {"hidden_units": [2]} if make is ke.DNNClassifier else {}
    est = make(feature_columns=columns, n_classes=n_classes, model_dir=str(tmp_path), **kwargs)
    x = np.array([[0.0], [1.0], [2.0], [1.5]], np.float32)
    y = np.array([[0], [1], [classes - 1], [1]], np.int64)
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(2), steps=2)
    predictions = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(2)))
    assert [p["probabilities"].shape for p in predictions] == [(classes,)] * 4
