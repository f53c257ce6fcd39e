"""The binary head of `BoostedTreesClassifier`, with tf.estimator 2.8's `auc_precision_recall`.

2.8's BoostedTreesClassifier (n_classes=2) did not use `BinaryClassHead`
but the older head of `tf.estimator`'s canned/head.py, whose
`auc_precision_recall` was `tf.compat.v1.metrics.auc(curve='PR')`: 200
thresholds and the trapezoidal rule over (recall, precision), each ratio
with 1e-6 added above and below. `BinaryClassHead`'s Keras `AUC` interpolates
the PR curve instead (Davis & Goadrich), which gives another number on the
same predictions (0.97597 for 2.8's 0.98287 on the breast-cancer model_dir of
`tests/fixtures/tf28_boosted_trees/`); the v1 heads' `V1Auc` computes 2.8's.
Every other metric, the loss and the
predictions of the two heads are the same.
"""

from __future__ import annotations

import keras

from keras_estimator._src.head.classification_heads import BinaryClassHead
from keras_estimator._src.head.v1_heads import V1Auc


class Tf28BinaryClassHead(BinaryClassHead):
    """`BinaryClassHead` whose `auc_precision_recall` is 2.8's (see the module)."""

    def _precision_recall_auc(self) -> keras.metrics.Metric:
        return V1Auc(curve="PR", name="auc_precision_recall")
