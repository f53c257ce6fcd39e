"""Labels whose shape is known only when the step runs fail with 2.15's text.

tf.estimator 2.15's heads checked such labels with an assertion carrying
'expected_labels_shape' and 'labels_shape' as data; its own head tests
(multi_class_head_test, regression_head_test) match that text. The strings
below are what 2.15 raised for the same calls (reference venv).
"""

import re

import pytest
import tensorflow as tf

import keras_estimator as ke

_FIX = "Suggested Fix: check your n_classes argument to the head and/or the shape of your label."


def _assertion_text(head, labels):
    @tf.function(input_signature=[tf.TensorSpec([None, None], labels.dtype)])
    def loss(unknown_shape_labels):
        return head.loss(
            labels=unknown_shape_labels,
            logits=tf.zeros([2, 3]),
            features={},
            mode=ke.ModeKeys.EVAL,
        )

    with pytest.raises(tf.errors.InvalidArgumentError) as raised:
        loss(labels)
    return re.search(r"assertion failed: (.*)", raised.value.message).group(1)


@pytest.mark.parametrize(
    "head, labels, expected",
    [
        (
            ke.MultiClassHead(3),
            tf.constant([[1, 0], [1, 1]], tf.int64),
            f"[labels shape must be [D0, D1, ... DN, 1]. {_FIX}] "
            "[expected_labels_shape: ] [2 1] [labels_shape: ] [2 2]",
        ),
        (
            ke.RegressionHead(label_dimension=3),
            tf.zeros([2, 1]),
            f"[labels shape must be [D0, D1, ... DN, 3]. {_FIX}] "
            "[expected_labels_shape: ] [2 3] [labels_shape: ] [2 1]",
        ),
    ],
)
def test_the_assertion_gives_2_15s_message_and_shapes(head, labels, expected):
    assert _assertion_text(head, labels) == expected
