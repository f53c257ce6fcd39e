"""SavedModel export: receivers, export outputs, signatures, and serving.

The end-to-end checks load the exports in a separate Python process that
cannot import keras_estimator, call every signature, and compare with
`Estimator.predict`; `saved_model_cli show --all` must list the signatures
with the method names TensorFlow Serving dispatches on.
"""

import logging
import os
import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator import export
from keras_estimator._src.base import serving_input
from keras_estimator.compat import layers
from tests._models import input_fn, make_data

X, Y = make_data(num_examples=32)
FEATURE_SPEC = {"x": tf.io.FixedLenFeature([4], tf.float32)}
CLASS_NAMES = [b"a", b"b", b"c"]
SERVING = tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY
# A variable model_fn captures rather than creates: in no checkpoint.
OUTSIDE = tf.Variable(2.0, name="outside")


def serialize(rows):
    return [
        tf.train.Example(
            features=tf.train.Features(
                feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=r))}
            )
        ).SerializeToString()
        for r in rows
    ]


def model_fn(features, labels, mode, params):
    """An MLP with classification, regression and predict outputs."""
    x = features["x"] if isinstance(features, dict) else features
    net = layers.dense(x, 8, activation=tf.nn.relu)
    logits = layers.dense(net, 3)
    value = layers.dense(net, 1)[:, 0]
    if params.get("outside"):
        logits = logits * OUTSIDE
    probabilities = tf.nn.softmax(logits)
    if mode == ke.ModeKeys.PREDICT:
        predictions = {"logits": logits, "probabilities": probabilities, "value": value}
        classes = tf.tile(tf.constant(CLASS_NAMES)[None], [tf.shape(logits)[0], 1])
        outputs = {
            "full": {
                SERVING: export.PredictOutput(predictions),
                "classification": export.ClassificationOutput(probabilities, classes),
                "regression": export.RegressionOutput(value),
            },
            "default": None,
            "not_an_output": {SERVING: logits},
            "no_default": {
                "a": export.PredictOutput(logits),
                "b": export.RegressionOutput(value),
            },
        }[params.get("outputs", "full")]
        return ke.EstimatorSpec(mode, predictions=predictions, export_outputs=outputs)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    loss += tf.reduce_mean(tf.square(value - tf.cast(labels, tf.float32)))
    optimizer = tf.compat.v1.train.AdamOptimizer(0.05)
    train_op = optimizer.minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def estimator(model_dir, **params):
    config = ke.RunConfig(tf_random_seed=1, save_checkpoints_steps=3)
    return ke.Estimator(
        model_fn, model_dir=str(model_dir), config=config, params=params
    )


def predictions(est, checkpoint_path=None):
    def predict_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": X}).batch(len(X))

    batches = est.predict(
        predict_input_fn, checkpoint_path=checkpoint_path, yield_single_examples=False
    )
    return next(iter(batches))


def parsing_receiver_with_alternative():
    receiver = export.build_parsing_serving_input_receiver_fn(FEATURE_SPEC)()
    return export.ServingInputReceiver(
        receiver.features,
        receiver.receiver_tensors,
        {"raw": {"x": receiver.features["x"]}},
    )


def tensor_receiver(key="x", **more_receivers):
    x = tf.compat.v1.placeholder(tf.float32, [None, 4])
    return export.TensorServingInputReceiver(x, {key: x, **more_receivers})


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    model_dir = tmp_path_factory.mktemp("model")
    est = estimator(model_dir)
    est.train(input_fn(X, Y, batch_size=8), steps=6)
    return est


# A process that cannot import keras_estimator loads each export and calls
# the requested signatures.
_SERVE_SCRIPT = textwrap.dedent(
    """
    import pickle, sys

    class NoKerasEstimator:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "keras_estimator":
                raise ModuleNotFoundError("keras_estimator is blocked here")
            return None

    sys.meta_path.insert(0, NoKerasEstimator())
    import tensorflow as tf

    with open(sys.argv[1], "rb") as handle:
        jobs = pickle.load(handle)
    results, loaded = {}, {}
    for export_dir, signature, inputs in jobs:
        if export_dir not in loaded:
            loaded[export_dir] = tf.saved_model.load(export_dir)
            results[(export_dir, None)] = sorted(loaded[export_dir].signatures)
        function = loaded[export_dir].signatures[signature]
        outputs = function(**{k: tf.constant(v) for k, v in inputs.items()})
        results[(export_dir, signature)] = {k: v.numpy() for k, v in outputs.items()}
    assert "keras_estimator" not in sys.modules
    with open(sys.argv[2], "wb") as handle:
        pickle.dump(results, handle)
    """
)


@pytest.fixture(scope="module")
def served(trained, tmp_path_factory):
    """Exports three SavedModels and serves them in a fresh process."""
    work = tmp_path_factory.mktemp("serve")
    base = work / "export"
    asset = work / "vocab.txt"
    asset.write_text("a\nb\nc\n")
    full = trained.export_saved_model(
        str(base),
        parsing_receiver_with_alternative,
        assets_extra={"labels/vocab.txt": str(asset)},
    )
    old_checkpoint = os.path.join(trained.model_dir, "model.ckpt-3")
    default_outputs = estimator(trained.model_dir, outputs="default")
    raw = default_outputs.export_saved_model(
        base,
        export.build_raw_serving_input_receiver_fn({"x": tf.constant(X[:2])}),
        as_text=True,
        checkpoint_path=old_checkpoint,
    )
    tensor = default_outputs.experimental_export_all_saved_models(
        str(base).encode(), {ke.ModeKeys.PREDICT: tensor_receiver}
    )
    full, raw, tensor = (os.fsdecode(p) for p in (full, raw, tensor))
    examples = serialize(X)
    jobs = [
        (full, SERVING, {"examples": examples}),
        (full, "classification", {"inputs": examples}),
        (full, "regression", {"inputs": examples}),
        (full, "raw:serving_default", {"x": X}),
        (raw, SERVING, {"x": X}),
        (tensor, SERVING, {"x": X}),
    ]
    (work / "jobs.pkl").write_bytes(pickle.dumps(jobs))
    (work / "serve.py").write_text(_SERVE_SCRIPT)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    cli = Path(sys.executable).parent / "saved_model_cli"
    processes = [
        subprocess.Popen(
            [sys.executable, "serve.py", "jobs.pkl", "results.pkl"],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        ),
        subprocess.Popen(
            [str(cli), "show", "--all", "--dir", full],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        ),
    ]
    logs = [process.communicate(timeout=120)[0].decode() for process in processes]
    for process, log in zip(processes, logs, strict=True):
        assert process.returncode == 0, log[-3000:]
    return {
        "dirs": {"full": full, "raw": raw, "tensor": tensor},
        "results": pickle.loads((work / "results.pkl").read_bytes()),
        "cli": logs[1],
        "latest": predictions(trained),
        "old": predictions(trained, checkpoint_path=old_checkpoint),
        "base": base,
    }


def test_served_signatures_match_predict(served):
    results, dirs, latest = served["results"], served["dirs"], served["latest"]
    full = dirs["full"]
    assert results[(full, None)] == [
        "classification",
        "raw:serving_default",
        "regression",
        SERVING,
    ]
    for signature in (SERVING, "raw:serving_default"):
        outputs = results[(full, signature)]
        assert sorted(outputs) == ["logits", "probabilities", "value"]
        for key, value in outputs.items():
            np.testing.assert_allclose(value, latest[key], rtol=1e-5, atol=1e-5)
    classified = results[(full, "classification")]
    np.testing.assert_allclose(
        classified["scores"], latest["probabilities"], rtol=1e-5, atol=1e-5
    )
    assert classified["classes"].tolist() == [CLASS_NAMES] * len(X)
    regressed = results[(full, "regression")]
    np.testing.assert_allclose(
        regressed["outputs"], latest["value"], rtol=1e-5, atol=1e-5
    )


def test_export_takes_checkpoint_path_and_leaves_estimator_alone(served):
    results, dirs, old = served["results"], served["dirs"], served["old"]
    assert not np.allclose(old["logits"], served["latest"]["logits"])
    for name in ("raw", "tensor"):
        outputs = results[(dirs[name], SERVING)]
        assert sorted(outputs) == ["logits", "probabilities", "value"]
        checkpoint = old if name == "raw" else served["latest"]
        for key, value in outputs.items():
            np.testing.assert_allclose(value, checkpoint[key], rtol=1e-5, atol=1e-5)


def test_saved_model_cli_lists_signatures_and_method_names(served):
    sections = {}
    for chunk in served["cli"].split("signature_def['")[1:]:
        key, _, body = chunk.partition("']")
        sections[key] = body
    assert {k for k in sections if not k.startswith("__")} == {
        SERVING,
        "classification",
        "regression",
        "raw:serving_default",
    }

    def method(key):
        return re.search(r"Method name is: (\S+)", sections[key]).group(1)

    assert method(SERVING) == "tensorflow/serving/predict"
    assert method("raw:serving_default") == "tensorflow/serving/predict"
    assert method("classification") == "tensorflow/serving/classify"
    assert method("regression") == "tensorflow/serving/regress"
    assert "inputs['examples']" in sections[SERVING]
    assert "inputs['inputs']" in sections["classification"]
    assert "outputs['outputs']" in sections["regression"]


def test_export_files_and_directories(served):
    base, dirs = served["base"], served["dirs"]
    names = sorted(os.listdir(base))
    assert len(names) == 3 and all(name.isdigit() for name in names)
    assert sorted(os.path.basename(d) for d in dirs.values()) == names
    full = Path(dirs["full"])
    assert (full / "saved_model.pb").exists()
    assert (full / "assets.extra" / "labels" / "vocab.txt").read_text() == "a\nb\nc\n"
    raw = Path(dirs["raw"])
    assert (raw / "saved_model.pbtxt").exists() and not (
        raw / "saved_model.pb"
    ).exists()


# ---- receivers ------------------------------------------------------------------
def test_serving_input_receiver_wraps_single_tensors():
    x = tf.constant([[1.0]])
    receiver = export.ServingInputReceiver(x, x, {"alt": x})
    assert receiver.features == {"feature": x}
    assert receiver.receiver_tensors == {"input": x}
    assert receiver.receiver_tensors_alternatives == {"alt": {"input": x}}
    assert export.ServingInputReceiver({3: x}, {"x": x}).features == {3: x}
    assert export.TensorServingInputReceiver(x, x).features is x


@pytest.mark.parametrize(
    ("make_args", "pattern"),
    [
        (lambda x: (None, x), r"features must be defined"),
        (lambda x: (x, None), r"receiver_tensors must be defined"),
        (
            lambda x: ({"x": [1.0]}, x),
            r"^feature x must be a Tensor, SparseTensor, or RaggedTensor\..*\[1.0\].*placeholder",
        ),
        (lambda x: (x, {"x": 3}), r"^receiver_tensor x must be a Tensor.*Got 3"),
        (lambda x: (x, {1: x}), r"receiver_tensor keys must be strings; got 1"),
        (lambda x: (x, x, [x]), r"receiver_tensors_alternatives must be a dict"),
        (lambda x: (x, x, {"a": {"b": "oops"}}), r"alternative b must be a Tensor"),
    ],
)
def test_serving_input_receiver_validation(make_args, pattern):
    with pytest.raises(ValueError, match=pattern):
        export.ServingInputReceiver(*make_args(tf.constant([1.0])))


def test_tensor_serving_input_receiver_validation():
    x = tf.constant([1.0])
    with pytest.raises(ValueError, match=r"features must be defined"):
        export.TensorServingInputReceiver(None, x)
    with pytest.raises(ValueError, match=r"feature must be a Tensor.*dict"):
        export.TensorServingInputReceiver({"x": x}, x)


class _LabeledTensorLike:
    """What 2.15's export tests stand in for LabeledTensor with: a `.tensor`."""

    def __init__(self, tensor):
        self.tensor = tensor


tf.register_tensor_conversion_function(
    _LabeledTensorLike, lambda value, *args, **kwargs: tf.convert_to_tensor(value.tensor)
)


class _HasTensorOnly:
    def __init__(self):
        self.tensor = "not convertible"


def test_a_labeled_tensor_like_value_is_taken_as_its_tensor_as_in_2_15():
    # 2.15 accepted a value with `.tensor` that tf.convert_to_tensor takes
    # (export_test.py's LabeledTensorMock) as a feature or label.
    x = tf.constant([1])
    receiver = export.ServingInputReceiver(_LabeledTensorLike(x), tf.constant(["test"]))
    np.testing.assert_array_equal(receiver.features["feature"], [1])
    # Kept as given, as 2.15 kept a SupervisedInputReceiver's features.
    labeled = _LabeledTensorLike(x)
    supervised = serving_input.SupervisedInputReceiver(
        labeled, tf.constant(5), tf.constant(["test"])
    )
    assert supervised.features is labeled
    tensor_receiver = export.TensorServingInputReceiver(_LabeledTensorLike(x), x)
    assert isinstance(tensor_receiver.features, tf.Tensor)
    with pytest.raises(ValueError, match=r"^feature feature must be a Tensor"):
        export.ServingInputReceiver(_HasTensorOnly(), x)


def test_parsing_receiver_fn_builds_an_examples_placeholder():
    with tf.Graph().as_default():
        receiver = export.build_parsing_serving_input_receiver_fn(FEATURE_SPEC, 5)()
        ((key, examples),) = receiver.receiver_tensors.items()
        assert key == "examples" and examples.dtype == tf.string
        assert examples.op.type == "Placeholder" and examples.shape.as_list() == [5]
        assert receiver.features["x"].shape.as_list() == [5, 4]
    with pytest.raises(TypeError, match=r"feature_spec\['x'\] must be a tf.io"):
        export.build_parsing_serving_input_receiver_fn({"x": tf.float32})
    with pytest.raises(TypeError, match=r"feature_spec must be a dict"):
        export.build_parsing_serving_input_receiver_fn([FEATURE_SPEC])


def test_raw_receiver_fns_make_placeholders_like_the_examples():
    features = {"x": tf.zeros([2, 4]), "ids": tf.TensorSpec([None, 3], tf.int64)}
    with tf.Graph().as_default():
        receiver = export.build_raw_serving_input_receiver_fn(features, 7)()
        assert (
            sorted(receiver.features)
            == sorted(receiver.receiver_tensors)
            == [
                "ids",
                "x",
            ]
        )
        assert receiver.receiver_tensors["x"].shape.as_list() == [7, 4]
        assert receiver.receiver_tensors["ids"].dtype == tf.int64
        assert receiver.features["x"] is receiver.receiver_tensors["x"]
        supervised = ke.experimental.build_raw_supervised_input_receiver_fn(
            tf.zeros([2, 4]), {"y": tf.zeros([2], tf.int32)}
        )()
        assert sorted(supervised.receiver_tensors) == ["input", "y"]
        assert supervised.features.shape.as_list() == [None, 4]
        assert supervised.labels["y"].dtype == tf.int32
    with pytest.raises(TypeError, match=r"features must be a dict.*\{'x': tensor\}"):
        export.build_raw_serving_input_receiver_fn(tf.zeros([2, 4]))
    with pytest.raises(TypeError, match=r"values must be tf.Tensor or tf.TensorSpec"):
        export.build_raw_serving_input_receiver_fn({"x": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"overlapping keys: \['label'\]"):
        ke.experimental.build_raw_supervised_input_receiver_fn(
            {"label": tf.zeros([1])}, tf.zeros([1])
        )


# ---- export outputs --------------------------------------------------------------
def test_export_output_validation():
    floats, ints = tf.constant([[0.5]]), tf.constant([[1]])
    assert export.PredictOutput(floats).outputs == {"output": floats}
    assert export.PredictOutput({("head", "p"): floats}).outputs == {"head/p": floats}
    with pytest.raises(
        ValueError, match=r"Prediction output value must be a tf.Tensor"
    ):
        export.PredictOutput({"p": np.ones(2)})
    with pytest.raises(ValueError, match=r"output key must be a string.*got 3"):
        export.PredictOutput({3: floats})
    with pytest.raises(ValueError, match=r"scores must be a float tf.Tensor.*int32"):
        export.ClassificationOutput(scores=ints)
    with pytest.raises(ValueError, match=r"classes must be a string tf.Tensor"):
        export.ClassificationOutput(classes=ints)
    with pytest.raises(ValueError, match=r"empty arguments"):
        export.ClassificationOutput()
    with pytest.raises(ValueError, match=r"Regression output value must be a float"):
        export.RegressionOutput(ints)
    with pytest.raises(TypeError, match=r"abstract"):
        export.ExportOutput()


def test_eval_output_prefixes_keys_and_checks_metrics():
    loss, predictions = tf.constant(1.0), tf.constant([2.0])
    update = tf.constant(0.0)
    output = export.EvalOutput(
        loss=loss, predictions={"p": predictions}, metrics={"acc": (loss, update)}
    )
    assert output.loss == {"loss": loss}
    assert output.predictions == {"predictions/p": predictions}
    assert sorted(output.metrics) == ["metrics/acc/update_op", "metrics/acc/value"]
    with pytest.raises(
        TypeError, match=r"keras.metrics.Metric.*\(value_tensor, update_op\)"
    ):
        export.EvalOutput(metrics={"acc": keras.metrics.Mean()})
    with pytest.raises(
        ValueError, match=r"must be a \(value_tensor, update_op\) tuple"
    ):
        export.EvalOutput(metrics={"acc": loss})


def test_signature_defs_keys_and_method_names():
    with tf.Graph().as_default():
        examples = tf.compat.v1.placeholder(tf.string, [None])
        x = tf.compat.v1.placeholder(tf.float32, [None, 2])
        scores, value = tf.nn.softmax(x), x[:, 0]
        predict = export.PredictOutput({"s": scores}).as_signature_def({"x": x})
        assert predict.method_name == tf.saved_model.PREDICT_METHOD_NAME
        assert list(predict.inputs) == ["x"] and list(predict.outputs) == ["s"]
        classify = export.ClassificationOutput(scores=scores)
        signature = classify.as_signature_def({"examples": examples})
        assert signature.method_name == tf.saved_model.CLASSIFY_METHOD_NAME
        assert list(signature.inputs) == ["inputs"]
        assert list(signature.outputs) == ["scores"]
        regress = export.RegressionOutput(value).as_signature_def({"e": examples})
        assert regress.method_name == tf.saved_model.REGRESS_METHOD_NAME
        assert list(regress.outputs) == ["outputs"]
        for receivers in ({"x": x}, {"e": examples, "f": examples}):
            with pytest.raises(ValueError, match=r"single tf.string tensor"):
                classify.as_signature_def(receivers)
        evaluation = export.EvalOutput(loss=value[0]).as_signature_def({"x": x})
        assert evaluation.method_name == "tensorflow/supervised/eval"
        assert list(evaluation.outputs) == ["loss"]


# ---- export errors ---------------------------------------------------------------
def test_export_without_checkpoint_raises(tmp_path):
    receiver_fn = export.build_parsing_serving_input_receiver_fn(FEATURE_SPEC)
    est = estimator(tmp_path / "empty")
    with pytest.raises(ValueError, match=r"Couldn't find trained model at .*empty"):
        est.export_saved_model(str(tmp_path / "export"), receiver_fn)
    with pytest.raises(ValueError, match=r"is not a checkpoint .*model.ckpt-100"):
        est.export_saved_model(
            str(tmp_path), receiver_fn, checkpoint_path=str(tmp_path / "nope")
        )
    assert not (tmp_path / "export").exists()


def test_export_falls_back_to_the_warm_start_checkpoint(trained, tmp_path):
    est = ke.Estimator(
        model_fn, model_dir=str(tmp_path / "new"), warm_start_from=trained.model_dir
    )
    path = est.export_saved_model(str(tmp_path / "export"), tensor_receiver)
    served = tf.saved_model.load(os.fsdecode(path)).signatures[SERVING](x=X)
    expected = predictions(trained)["logits"]
    np.testing.assert_allclose(served["logits"], expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("params", "receiver_fn", "error", "pattern"),
    [
        (
            {},
            lambda: {"x": 1},
            TypeError,
            r"must return a ServingInputReceiver.*got \{'x': 1\}",
        ),
        (
            {"outputs": "not_an_output"},
            tensor_receiver,
            TypeError,
            r"export_outputs\['serving_default'\] must be an ExportOutput.*PredictOutput",
        ),
        (
            {"outputs": "no_default"},
            tensor_receiver,
            ValueError,
            r"several signatures \['a', 'b'\] but none is named 'serving_default'",
        ),
        (
            {},
            lambda: tensor_receiver(ids=tf.compat.v1.sparse_placeholder(tf.int64)),
            ValueError,
            r"sparse or ragged input 'ids'.*dense tensors only",
        ),
    ],
)
def test_export_rejects_bad_receivers_and_outputs(
    trained, tmp_path, params, receiver_fn, error, pattern
):
    est = estimator(trained.model_dir, **params)
    with pytest.raises(error, match=pattern):
        est.export_saved_model(str(tmp_path), receiver_fn)
    assert os.listdir(tmp_path) == []


def test_export_rejects_bad_arguments(trained, tmp_path):
    receiver_fn = tensor_receiver
    base = str(tmp_path / "export")
    with pytest.raises(ValueError, match=r"input_receiver_fn must be defined"):
        trained.export_saved_model(base, None)
    with pytest.raises(NotImplementedError, match=r"'eval' graph.*ModeKeys.PREDICT"):
        trained.export_saved_model(
            base, receiver_fn, experimental_mode=ke.ModeKeys.EVAL
        )
    with pytest.raises(NotImplementedError, match=r"'train' graph"):
        trained.experimental_export_all_saved_models(
            base, {ke.ModeKeys.TRAIN: receiver_fn, ke.ModeKeys.PREDICT: receiver_fn}
        )
    with pytest.raises(ValueError, match=r"keys \['serve'\] that are not modes"):
        trained.experimental_export_all_saved_models(base, {"serve": receiver_fn})
    with pytest.raises(ValueError, match=r"No valid modes for exporting found"):
        trained.experimental_export_all_saved_models(base, {})
    with pytest.raises(ValueError, match=r"destination '../x' must be a relative path"):
        trained.export_saved_model(base, receiver_fn, assets_extra={"../x": __file__})
    with pytest.raises(ValueError, match=r"source file '.*missing.txt' does not exist"):
        trained.export_saved_model(
            base, receiver_fn, assets_extra={"x": str(tmp_path / "missing.txt")}
        )
    with pytest.raises(TypeError, match=r"^assets_extra\['x'\] must be a path .*got 1"):
        trained.export_saved_model(base, receiver_fn, assets_extra={"x": 1})
    with pytest.raises(TypeError, match=r"^an assets_extra destination must be a path .*got 2"):
        trained.export_saved_model(base, receiver_fn, assets_extra={2: __file__})
    assert not os.path.exists(base)


def test_alias_drops_unservable_alternative_and_saves_outside_variables(
    trained, tmp_path, caplog
):
    def receiver_fn():
        x = tf.compat.v1.placeholder(tf.float32, [None, 4], name="x")
        scale = tf.compat.v1.placeholder(tf.float32, [], name="scale")
        return export.ServingInputReceiver(
            {"x": x * scale},
            {"x": x, "scale": scale, "same_x": x},
            receiver_tensors_alternatives={"only_x": {"x": x}},
        )

    caplog.set_level("INFO", logger="keras_estimator")
    est = estimator(trained.model_dir, outside=True)
    with pytest.deprecated_call():
        path = est.export_savedmodel(str(tmp_path), receiver_fn)
    assert re.search(
        r"'only_x:serving_default' EXCLUDED.*placeholder 'scale'", caplog.text
    )
    loaded = tf.saved_model.load(os.fsdecode(path))
    assert sorted(loaded.signatures) == [SERVING]
    outputs = loaded.signatures[SERVING](x=X, scale=tf.constant(1.0), same_x=X)
    expected = predictions(est)["logits"]
    np.testing.assert_allclose(outputs["logits"], expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        expected, predictions(trained)["logits"] * 2.0, rtol=1e-5, atol=1e-5
    )
    assert "outside:0, created outside model_fn" in caplog.text


def test_lookup_tables_of_a_model_fn_are_saved_and_served(tmp_path):
    """A vocabulary column's table lives outside the graph; the export keeps it."""
    color = tf.feature_column.categorical_column_with_vocabulary_list(
        "color", ["red", "green", "blue"]
    )
    columns = [tf.feature_column.indicator_column(color)]

    def vocab_model_fn(features, labels, mode):
        net = tf.compat.v1.feature_column.input_layer(features, columns)
        logits = layers.dense(net, 1, use_bias=False)
        predictions = {"score": logits}
        if mode == ke.ModeKeys.PREDICT:
            return ke.EstimatorSpec(mode, predictions=predictions)
        loss = tf.reduce_mean(tf.square(logits - labels))
        step = tf.compat.v1.train.get_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(loss, step)
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def train_input():
        features = {"color": tf.constant(["red", "green", "blue", "red"])}
        labels = tf.constant([[1.0], [2.0], [3.0], [1.0]])
        return tf.data.Dataset.from_tensors((features, labels)).repeat()

    est = ke.Estimator(vocab_model_fn, model_dir=str(tmp_path / "model"))
    est.train(train_input, steps=50)
    spec = tf.feature_column.make_parse_example_spec(columns)
    export_dir = est.export_saved_model(
        str(tmp_path / "export"), export.build_parsing_serving_input_receiver_fn(spec)
    )
    loaded = tf.saved_model.load(export_dir)
    examples = [
        tf.train.Example(
            features=tf.train.Features(
                feature={"color": tf.train.Feature(bytes_list=tf.train.BytesList(value=[c]))}
            )
        ).SerializeToString()
        for c in (b"blue", b"red", b"purple")
    ]
    served = loaded.signatures["serving_default"](examples=tf.constant(examples))
    scores = served["score"].numpy().ravel()
    # Trained to the labels; an unknown color has no weight.
    np.testing.assert_allclose(scores, [3.0, 1.0, 0.0], atol=0.05)
    predicted = [
        p["score"][0]
        for p in est.predict(
            lambda: tf.data.Dataset.from_tensors({"color": tf.constant(["blue", "red", "purple"])})
        )
    ]
    np.testing.assert_allclose(scores, predicted, rtol=1e-6)


def test_export_leaves_tensorflow_nothing_to_rename(trained, tmp_path, caplog):
    """Signature inputs are the receiver keys; no input is renamed or logged.

    The variables a signature reads used to enter its function as inputs
    named by a number, which tf.saved_model.save renamed on every export,
    logging "Function `signature` contains input name(s) ... with unsupported
    characters which will be renamed ...".
    """

    def receiver_fn():
        x = tf.compat.v1.placeholder(tf.float32, [None, 4])
        scale = tf.compat.v1.placeholder(tf.float32, [])
        # A key spelled like a name the export could pick for a variable.
        return export.ServingInputReceiver(
            {"x": x * scale},
            {"x": x, "scale": scale, "captured_0": x},
            receiver_tensors_alternatives={"raw": {"x": x, "scale": scale}},
        )

    # TensorFlow logs the renaming through absl; both loggers are captured.
    for name in ("absl", "tensorflow"):
        caplog.set_level(logging.DEBUG, logger=name)
    export_dir = os.fsdecode(trained.export_saved_model(str(tmp_path), receiver_fn))
    messages = [record.getMessage() for record in caplog.records]
    assert any("SavedModel written to" in m for m in messages), messages
    assert not [m for m in messages if "renamed" in m or "unsupported" in m]

    loaded = tf.saved_model.load(export_dir)
    assert sorted(loaded.signatures) == ["raw:serving_default", SERVING]
    expected_keys = {
        SERVING: ["captured_0", "scale", "x"],
        "raw:serving_default": ["scale", "x"],
    }
    for signature, keys in expected_keys.items():
        args, kwargs = loaded.signatures[signature].structured_input_signature
        assert args == ()
        assert sorted(kwargs) == keys
        assert sorted(spec.name for spec in kwargs.values()) == keys
    served = loaded.signatures[SERVING](x=X, scale=tf.constant(1.0), captured_0=X)
    np.testing.assert_allclose(
        served["logits"], predictions(trained)["logits"], rtol=1e-5, atol=1e-5
    )


def test_a_seeded_random_op_of_the_serving_graph_draws_what_tf215_drew(tmp_path):
    """With RunConfig.tf_random_seed, a random op the model_fn makes after a
    randomly initialised variable takes the seed 2.15's serving graph gave it,
    which counted the initializer's random op before it: the SavedModel's
    first draw is 2.15's 0.7780691 (reference venv; the export traced the
    model_fn twice, the second time on existing variables, and drew
    0.1273640)."""

    def noisy_model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable(
            "w", [2, 1], initializer=tf.compat.v1.glorot_uniform_initializer()
        )
        y = tf.matmul(features["x"], w)
        noise = tf.random.uniform([1])
        predictions = {"y": y, "noise": noise + 0 * y}
        if mode == ke.ModeKeys.PREDICT:
            return ke.EstimatorSpec(mode, predictions=predictions)
        loss = tf.reduce_mean(tf.square(y - labels))
        step = tf.compat.v1.train.get_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    ones = np.ones((4, 2), np.float32)
    est = ke.Estimator(
        noisy_model_fn, model_dir=str(tmp_path / "model"), config=ke.RunConfig(tf_random_seed=3)
    )
    est.train(
        lambda: tf.data.Dataset.from_tensor_slices(({"x": ones}, ones[:, :1])).batch(2), steps=2
    )

    def receiver_fn():
        x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        return export.ServingInputReceiver({"x": x}, {"x": x})

    export_dir = est.export_saved_model(str(tmp_path / "export"), receiver_fn)
    served = tf.saved_model.load(export_dir).signatures[SERVING](x=tf.constant(ones[:1]))
    # 2.15's values: the draw, and y of the trained weights (restored).
    np.testing.assert_allclose(served["noise"].numpy().ravel(), [0.7780691], rtol=1e-6)
    np.testing.assert_allclose(served["y"].numpy().ravel(), [0.5809988], rtol=1e-6)
