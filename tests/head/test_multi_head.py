"""MultiHead: merged losses, predictions, metrics and signatures as 2.15's.

The frozen figures were computed with tf.estimator 2.15's MultiHead on the
same inputs (`benchmarks/.ref-venv`).
"""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.base.export_outputs import (
    ClassificationOutput,
    PredictOutput,
    RegressionOutput,
)
from keras_estimator._src.head.multi_head import MultiHead
from keras_estimator._src.head.multi_label_head import MultiLabelHead


def _heads():
    return [
        MultiLabelHead(2, weight_column="w", name="tags"),
        ke.MultiClassHead(3, name="kind"),
        ke.BinaryClassHead(weight_column="w", thresholds=[0.4], name="ok"),
    ]


def _inputs_2_15():
    """The inputs the frozen 2.15 figures below were computed on."""
    rng = np.random.RandomState(5)
    logits = rng.normal(size=(6, 6)).astype(np.float32) * 2
    tags = rng.randint(0, 2, size=(6, 2)).astype(np.int64)
    kind = rng.randint(0, 3, size=(6, 1)).astype(np.int64)
    ok = rng.randint(0, 2, size=(6, 1)).astype(np.int64)
    weights = rng.uniform(0.2, 2, size=(6, 1)).astype(np.float32)
    return logits, {"tags": tags, "kind": kind, "ok": ok}, {"w": weights}


# tf.estimator 2.15: MultiHead(_heads(), head_weights=[1.0, 0.5, 2.0]) with
# regularization_losses=[0.5].
LOSS_2_15 = 4.182126045227051
METRICS_2_15 = {
    "regularization_loss/tags_kind_ok": 0.5,
    "loss/tags": 0.9407653,
    "loss/kind": 0.7385374,
    "loss/ok": 1.186046,
    "average_loss/tags": 0.8049911,
    "auc/tags": 0.5054194,
    "auc_precision_recall/tags": 0.4130746,
    "average_loss/kind": 0.7385374,
    "accuracy/kind": 0.5,
    "average_loss/ok": 1.0148722,
    "accuracy/ok": 0.3936354,
    "precision/ok": 0.3100425,
    "recall/ok": 0.2819703,
    "prediction/mean/ok": 0.5525697,
    "label/mean/ok": 0.4506557,
    "accuracy_baseline/ok": 0.5493442,
    "auc/ok": 0.2416193,
    "auc_precision_recall/ok": 0.3556605,
    "accuracy/positive_threshold_0.4/ok": 0.1270715,
    "precision/positive_threshold_0.4/ok": 0.1878601,
    "recall/positive_threshold_0.4/ok": 0.2819703,
}
# tf.estimator 2.15's export outputs of the same MultiHead in PREDICT mode.
EXPORTS_2_15 = {
    "serving_default": ClassificationOutput,
    "tags": ClassificationOutput,
    "tags/classification": ClassificationOutput,
    "tags/predict": PredictOutput,
    "kind": ClassificationOutput,
    "kind/classification": ClassificationOutput,
    "kind/predict": PredictOutput,
    "ok": ClassificationOutput,
    "ok/classification": ClassificationOutput,
    "ok/regression": RegressionOutput,
    "ok/predict": PredictOutput,
    "predict": PredictOutput,
}


def _result(metric):
    if isinstance(metric, tuple):  # a (value, update_op) pair
        return np.asarray(metric[0])
    return metric.result().numpy()


def test_loss_and_metrics_are_2_15s():
    logits, labels, features = _inputs_2_15()
    head = MultiHead(_heads(), head_weights=[1.0, 0.5, 2.0])
    regularization = [tf.constant(0.5)]
    loss = head.loss(labels, logits, features, regularization_losses=regularization)
    np.testing.assert_allclose(loss.numpy(), LOSS_2_15, rtol=1e-6)
    metrics = head.update_metrics(
        head.metrics(regularization), features, logits, labels, regularization
    )
    assert sorted(metrics) == sorted(METRICS_2_15)
    for key, value in METRICS_2_15.items():
        np.testing.assert_allclose(_result(metrics[key]), value, rtol=1e-5, err_msg=key)


@given(
    weights=st.lists(st.floats(0.0, 3.0), min_size=3, max_size=3),
    seed=st.integers(0, 1000),
)
def test_loss_is_the_weighted_sum_of_the_heads_losses(weights, seed):
    rng = np.random.RandomState(seed)
    logits = rng.normal(size=(4, 6)).astype(np.float32)
    _, labels, features = _inputs_2_15()
    labels = {k: v[:4] for k, v in labels.items()}
    features = {"w": features["w"][:4]}
    heads = _heads()
    loss = MultiHead(heads, head_weights=weights).loss(labels, logits, features).numpy()
    pieces = np.split(logits, [2, 5], axis=1)
    want = sum(
        w * head.loss(labels[head.name], piece, features).numpy()
        for w, head, piece in zip(weights, heads, pieces, strict=True)
    )
    np.testing.assert_allclose(loss, want, rtol=1e-5, atol=1e-6)


def test_logits_tensor_splits_like_a_dict_in_head_order():
    logits, labels, features = _inputs_2_15()
    head = MultiHead(_heads())
    as_dict = {"tags": logits[:, :2], "kind": logits[:, 2:5], "ok": logits[:, 5:]}
    np.testing.assert_allclose(
        head.loss(labels, logits, features).numpy(),
        head.loss(labels, as_dict, features).numpy(),
        rtol=1e-6,
    )
    predictions = head.predictions(logits)
    np.testing.assert_array_equal(predictions[("kind", "logits")], logits[:, 2:5])
    assert head.name == "tags_kind_ok"
    assert head.logits_dimension == 6
    assert sorted(predictions) == sorted(
        [("tags", k) for k in ("classes", "logits", "probabilities")]
        + [
            ("kind", k)
            for k in (
                "all_class_ids", "all_classes", "class_ids", "classes", "logits",
                "probabilities",
            )
        ]
        + [
            ("ok", k)
            for k in (
                "all_class_ids", "all_classes", "class_ids", "classes", "logistic",
                "logits", "probabilities",
            )
        ]
    )


def test_export_outputs_are_2_15s():
    logits, _, features = _inputs_2_15()
    head = MultiHead(_heads())
    with tf.Graph().as_default():
        outputs = head._merged_export_outputs(
            {"w": tf.constant(features["w"])}, tf.constant(logits)
        )
    assert {k: type(v) for k, v in outputs.items()} == EXPORTS_2_15
    assert sorted(outputs["predict"].outputs) == sorted(
        ["tags/classes", "tags/logits", "tags/probabilities"]
        + [
            f"kind/{k}"
            for k in (
                "all_class_ids", "all_classes", "class_ids", "classes", "logits",
                "probabilities",
            )
        ]
        + [
            f"ok/{k}"
            for k in (
                "all_class_ids", "all_classes", "class_ids", "classes", "logistic",
                "logits", "probabilities",
            )
        ]
    )


def test_create_estimator_spec_keeps_2_15s_tuple_prediction_keys():
    logits, _, features = _inputs_2_15()
    with tf.Graph().as_default():
        spec = MultiHead(_heads()).create_estimator_spec(
            {"w": tf.constant(features["w"])}, "infer", tf.constant(logits)
        )
    assert ("tags", "probabilities") in spec.predictions


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: MultiHead([]), "Must specify heads"),
        (lambda: MultiHead([ke.MultiClassHead(3)]), "All given heads must have name specified"),
        (lambda: MultiHead(_heads(), head_weights=[1.0]), r"heads and head_weights must have the same size. Given len\(heads\): 3"),
        (
            lambda: MultiHead([ke.BinaryClassHead(name="a"), ke.RegressionHead(name="a")]),
            "distinct names",
        ),
    ],
)
def test_bad_arguments_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_logits_and_labels_are_refused():
    logits, labels, features = _inputs_2_15()
    head = MultiHead(_heads())
    with pytest.raises(ValueError, match="last dimension must be 6"):
        head.loss(labels, logits[:, :5], features)
    with pytest.raises(ValueError, match=r"logits has no values for head\(s\) \['ok'\]"):
        head.loss(labels, {"tags": logits[:, :2], "kind": logits[:, 2:5]}, features)
    with pytest.raises(ValueError, match=r"labels has no values for head\(s\) \['kind'\]"):
        head.loss({"tags": labels["tags"], "ok": labels["ok"]}, logits, features)
    with pytest.raises(ValueError, match="labels must be a dict by head name"):
        head.loss(labels["ok"], logits, features)
    mixed = MultiHead(
        [ke.BinaryClassHead(name="a"), ke.BinaryClassHead(name="b", loss_reduction="sum")]
    )
    # 2.15's first phrase (its multi_head_test matches "must be the same").
    with pytest.raises(
        ValueError, match=r"^The loss_reduction must be the same for different heads\. Given: "
    ):
        _ = mixed.loss_reduction


def test_a_dnn_estimator_with_a_multi_head_trains_evaluates_predicts_and_exports(tmp_path):
    from keras_estimator._src.canned.dnn import DNNEstimator
    from keras_estimator._src.canned.optimizers import CannedOptimizer

    rng = np.random.RandomState(0)
    x = rng.normal(size=(64, 3)).astype(np.float32)
    kind = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5).astype(np.int64)
    value = (2 * x[:, 2]).astype(np.float32)[:, None]

    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(
            ({"x": x}, {"kind": kind[:, None], "value": value})
        )
        return data.batch(16).repeat()

    head = MultiHead([ke.MultiClassHead(3, name="kind"), ke.RegressionHead(name="value")])
    est = DNNEstimator(
        head,
        hidden_units=[16],
        feature_columns=[tf.feature_column.numeric_column("x", shape=[3])],
        optimizer=lambda: CannedOptimizer("adam", learning_rate=0.05),
        model_dir=str(tmp_path / "model"),
    )
    est.train(input_fn, steps=200)
    metrics = est.evaluate(input_fn, steps=4)
    assert {"accuracy/kind", "average_loss/value", "loss/kind", "loss/value"} <= set(metrics)
    assert metrics["accuracy/kind"] > 0.95
    assert metrics["average_loss/value"] < 0.05
    np.testing.assert_allclose(
        metrics["loss"], metrics["loss/kind"] + metrics["loss/value"], rtol=1e-4
    )
    first = next(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(8)))
    assert ("kind", "class_ids") in first and ("value", "predictions") in first
    spec = {"x": tf.io.FixedLenFeature([3], tf.float32)}
    export_dir = est.export_saved_model(
        str(tmp_path / "export"), ke.export.build_parsing_serving_input_receiver_fn(spec)
    )
    loaded = tf.saved_model.load(export_dir)
    assert {"serving_default", "kind", "value", "predict"} <= set(loaded.signatures)
