"""DNN estimators against the broader tf.estimator 2.15 fixtures.

`tests/fixtures/make_tf215_premade_fixtures.py` wrote, with tf.estimator
2.15, model_dirs for mixed feature columns (numeric, bucketized, indicator
over a vocabulary list, embedding over a hash bucket), label_vocabulary,
weight columns, batch normalization, Adam, and heads given to DNNEstimator;
each `case.json` holds the constructor arguments and the exact rows. The DNN
cases restore here to 2.15's predictions and metrics, and training from
2.15's step 10 on its batches reproduces its step 20.
"""

import json
import shutil
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf215_premade"
DNN_CASES = [
    "dnn_classifier_iris",
    "dnn_classifier_vocab_weight",
    "dnn_regressor",
    "dnn_estimator_binary_thresholds",
    "dnn_estimator_multilabel",
    "linear_classifier_binary",
    "linear_regressor",
    "baseline_classifier",
    "baseline_regressor",
    "dnn_linear_combined_classifier",
    "dnn_linear_combined_regressor",
    "v1_dnn_classifier",
    "v1_linear_classifier",
]


def _column(spec):
    kind = spec["type"]
    if kind == "numeric_column":
        return tf.feature_column.numeric_column(
            spec["key"], shape=spec["shape"], dtype=tf.as_dtype(spec["dtype"])
        )
    if kind == "bucketized_column":
        return tf.feature_column.bucketized_column(
            _column(spec["source_column"]), boundaries=spec["boundaries"]
        )
    if kind == "categorical_column_with_vocabulary_list":
        return tf.feature_column.categorical_column_with_vocabulary_list(
            spec["key"],
            spec["vocabulary_list"],
            default_value=spec["default_value"],
            num_oov_buckets=spec["num_oov_buckets"],
        )
    if kind == "categorical_column_with_hash_bucket":
        return tf.feature_column.categorical_column_with_hash_bucket(
            spec["key"], spec["hash_bucket_size"], dtype=tf.as_dtype(spec["dtype"])
        )
    if kind == "categorical_column_with_identity":
        return tf.feature_column.categorical_column_with_identity(
            spec["key"], spec["num_buckets"], default_value=spec["default_value"]
        )
    if kind == "indicator_column":
        return tf.feature_column.indicator_column(_column(spec["categorical_column"]))
    if kind == "crossed_column":
        keys = [k if isinstance(k, str) else _column(k) for k in spec["keys"]]
        return tf.feature_column.crossed_column(keys, spec["hash_bucket_size"])
    if kind == "embedding_column":
        return tf.feature_column.embedding_column(
            _column(spec["categorical_column"]), spec["dimension"], combiner=spec["combiner"]
        )
    raise AssertionError(f"no builder for {kind}")


def _head(spec):
    return getattr(ke, spec["class"])(**spec["kwargs"])


def _optimizer(spec):
    if isinstance(spec, str):
        return spec
    name = spec["class"].rsplit(".", 1)[-1]
    return getattr(keras.optimizers, name)(**spec["kwargs"])


def _case(name):
    return json.loads((FIXTURES / name / "case.json").read_text())


def _estimator(case, model_dir):
    spec = case["estimator"]
    args = dict(spec["args"])
    if "head" in args:
        args["head"] = _head(args["head"])
    for key in ("feature_columns", "linear_feature_columns", "dnn_feature_columns"):
        if key in args:
            args[key] = [_column(c) for c in args[key]]
    for key in ("optimizer", "linear_optimizer", "dnn_optimizer"):
        if key in args:
            args[key] = _optimizer(args[key])
    config = ke.RunConfig(tf_random_seed=spec["config"]["tf_random_seed"])
    namespace = ke.compat.estimator if spec["namespace"] == "tf.compat.v1.estimator" else ke
    return getattr(namespace, spec["class"])(model_dir=str(model_dir), config=config, **args)


def _dataset(inputs, labels=True, repeat=False):
    features = {k: np.asarray(v) for k, v in inputs["features"].items()}
    if labels:
        data = tf.data.Dataset.from_tensor_slices((features, np.asarray(inputs["labels"])))
    else:
        data = tf.data.Dataset.from_tensor_slices(features)
    data = data.batch(inputs["batch_size"])
    return data.repeat() if repeat else data


def _model_dir_at(name, step, tmp_path, fixtures=FIXTURES):
    """A copy of the case's 2.15 model_dir holding only its step-`step` checkpoint."""
    model_dir = tmp_path / name
    shutil.copytree(fixtures / name / "model_dir", model_dir)
    (model_dir / "checkpoint").write_text(
        f'model_checkpoint_path: "model.ckpt-{step}"\n'
        f'all_model_checkpoint_paths: "model.ckpt-{step}"\n'
    )
    for other in model_dir.glob("model.ckpt-*"):
        if not other.name.startswith(f"model.ckpt-{step}."):
            other.unlink()
    return model_dir


@pytest.mark.parametrize("name", DNN_CASES)
def test_2_15_model_dirs_restore_to_its_predictions_and_metrics(name, tmp_path):
    case = _case(name)
    est = _estimator(case, _model_dir_at(name, 20, tmp_path))
    inputs = case["eval_input"]
    expected = np.load(FIXTURES / name / "predictions.npz")
    predictions = list(est.predict(lambda: _dataset(inputs, labels=False)))
    assert sorted(predictions[0]) == sorted(expected.files)
    for key in expected.files:
        ours = np.stack([p[key] for p in predictions])
        theirs = expected[key].reshape(ours.shape)
        if ours.dtype.kind in "SOU":
            np.testing.assert_array_equal(ours.astype(bytes), theirs.astype(bytes), err_msg=key)
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6, err_msg=key)
    metrics = est.evaluate(lambda: _dataset(inputs))
    theirs = json.loads((FIXTURES / name / "eval.json").read_text())
    assert sorted(metrics) == sorted(theirs)
    for key, value in theirs.items():
        np.testing.assert_allclose(metrics[key], value, rtol=1e-4, atol=1e-5, err_msg=key)


@pytest.mark.parametrize("name", DNN_CASES)
def test_training_from_2_15s_step_10_reproduces_its_step_20(name, tmp_path):
    case = _case(name)
    est = _estimator(case, _model_dir_at(name, 10, tmp_path))
    inputs = case["train_input"]
    # 2.15 trained 20 steps in one call over 5 batches an epoch: steps 11-20
    # read batches 0-4 twice, as a fresh pipeline does.
    assert inputs["batches_per_epoch"] == 5
    est.train(lambda: _dataset(inputs, repeat=True), steps=10)
    ours = est.latest_checkpoint()
    theirs = str(FIXTURES / name / "model_dir" / "model.ckpt-20")
    names = sorted(n for n, _ in tf.train.list_variables(theirs))
    assert names == sorted(n for n, _ in tf.train.list_variables(ours))
    for variable in names:
        np.testing.assert_allclose(
            tf.train.load_variable(ours, variable),
            tf.train.load_variable(theirs, variable),
            rtol=1e-5,
            atol=1e-6,
            err_msg=variable,
        )


def _serving_columns(case):
    """The columns 2.15's parsing receiver parsed (a baseline's are its own)."""
    return [_column(c) for c in case["serving_input"]["columns"]]


def _serialized_examples(features):
    examples = []
    size = len(next(iter(features.values())))
    for row in range(size):
        feature = {}
        for key, values in features.items():
            value = np.asarray(values[row]).reshape(-1)
            if value.dtype.kind == "f":
                feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=value))
            elif value.dtype.kind in "iu":
                feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=value))
            else:
                data = [v.encode() if isinstance(v, str) else bytes(v) for v in value]
                feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=data))
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        examples.append(example.SerializeToString())
    return examples


@pytest.mark.parametrize("name", DNN_CASES)
def test_exported_signatures_are_2_15s_and_serve_its_predictions(name, tmp_path):
    case = _case(name)
    est = _estimator(case, _model_dir_at(name, 20, tmp_path))
    columns = _serving_columns(case)
    weight = case["estimator"]["args"].get("weight_column")
    spec = tf.feature_column.make_parse_example_spec(columns)
    receiver = ke.export.build_parsing_serving_input_receiver_fn(spec)
    export_dir = est.export_saved_model(str(tmp_path / "export"), receiver)
    theirs = json.loads((FIXTURES / name / "signatures.json").read_text())
    loaded = tf.saved_model.load(export_dir)
    assert sorted(loaded.signatures) == theirs["signature_keys"]
    for key, signature in theirs["signatures"].items():
        function = loaded.signatures[key]
        inputs = function.structured_input_signature[1]
        assert sorted(inputs) == sorted(signature["inputs"]), key
        for input_key, described in signature["inputs"].items():
            assert inputs[input_key].dtype.name == described["dtype"], (key, input_key)
        outputs = function.structured_outputs
        assert sorted(outputs) == sorted(signature["outputs"]), key
        for output_key, described in signature["outputs"].items():
            assert outputs[output_key].dtype.name == described["dtype"], (key, output_key)
            shape = [-1 if d is None else d for d in outputs[output_key].shape.as_list()]
            assert shape == described["shape"], (key, output_key)
    features = {
        k: v
        for k, v in case["eval_input"]["features"].items()
        if k != weight and k in spec
    }
    served = loaded.signatures["predict"](examples=tf.constant(_serialized_examples(features)))
    expected = np.load(FIXTURES / name / "predictions.npz")
    for key in expected.files:
        ours = served[key].numpy()
        theirs_values = expected[key].reshape(ours.shape)
        if ours.dtype.kind in "SOU":
            np.testing.assert_array_equal(ours, theirs_values.astype(bytes), err_msg=key)
        else:
            np.testing.assert_allclose(ours, theirs_values, rtol=1e-5, atol=1e-6, err_msg=key)
