"""TPUEstimator programs: use_tpu=False as 2.15 ran them off a TPU, and the TPU path
on a stand-in strategy (two logical CPUs), since no TPU is available here."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from keras_estimator._src.tpu import tpu_config as tpu_config_module
from keras_estimator._src.tpu import tpu_estimator as tpu_estimator_module
from keras_estimator.compat import layers
from keras_estimator.compat.estimator import tpu
from keras_estimator.export import PredictOutput, ServingInputReceiver

FEATURES = np.random.default_rng(0).normal(size=(64, 3)).astype(np.float32)
LABELS = (FEATURES @ np.array([1.0, -2.0, 0.5], np.float32) > 0).astype(np.int64)


def input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": FEATURES}, LABELS))
    return dataset.repeat().batch(params["batch_size"], drop_remainder=True)


def eval_input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": FEATURES}, LABELS))
    return dataset.batch(params["batch_size"])


SEEN = []


def model_fn(features, labels, mode, params):
    SEEN.append((mode, params.get("batch_size"), params["use_tpu"]))
    logits = layers.dense(features["x"], 2, name="logits")
    predictions = {"class_ids": tf.argmax(logits, axis=1), "logits": logits}
    if mode == "infer":
        return tpu.TPUEstimatorSpec(
            mode,
            predictions=predictions,
            export_outputs={"serving_default": PredictOutput(predictions)},
        )
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(
        loss, global_step=tf.compat.v1.train.get_or_create_global_step()
    )

    def metric_fn(labels, logits):
        return {"accuracy": tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))}

    return tpu.TPUEstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metrics=(metric_fn, [labels, logits])
    )


def no_metrics_model_fn(features, labels, mode, params):
    # tf.compat.v1.metrics do not build under MirroredStrategy here yet (their
    # sync-on-read variables refuse the building trace's cross-replica update).
    return model_fn(features, labels, mode, params)._replace(eval_metrics=None)


def _estimator(tmp_path, **kwargs):
    settings = dict(
        model_fn=model_fn,
        config=tpu.RunConfig(model_dir=str(tmp_path), tf_random_seed=1),
        use_tpu=False,
        train_batch_size=16,
        eval_batch_size=32,
        predict_batch_size=8,
    )
    settings.update(kwargs)
    return tpu.TPUEstimator(**settings)


def test_use_tpu_false_trains_evaluates_predicts_with_each_modes_batch_size(tmp_path):
    SEEN.clear()
    estimator = _estimator(tmp_path)
    estimator.train(input_fn, max_steps=40)
    metrics = estimator.evaluate(eval_input_fn)
    predictions = list(
        estimator.predict(
            lambda params: tf.data.Dataset.from_tensor_slices({"x": FEATURES}).batch(
                params["batch_size"]
            )
        )
    )
    assert metrics["global_step"] == 40
    assert metrics["accuracy"] > 0.9
    assert len(predictions) == 64 and set(predictions[0]) == {"class_ids", "logits"}
    assert ("train", 16, False) in SEEN
    assert ("eval", 32, False) in SEEN
    assert ("infer", 8, False) in SEEN


def test_export_has_no_batch_size_and_serves_in_plain_tensorflow(tmp_path):
    SEEN.clear()
    estimator = _estimator(tmp_path)
    estimator.train(input_fn, max_steps=5)

    def serving_input_fn():
        x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
        return ServingInputReceiver({"x": x}, {"x": x})

    export_dir = estimator.export_saved_model(
        str(tmp_path / "export"), serving_input_fn
    )
    assert ("infer", None, False) in SEEN
    expected = [
        p["logits"]
        for p in estimator.predict(
            lambda params: tf.data.Dataset.from_tensor_slices(
                {"x": FEATURES[:4]}
            ).batch(4)
        )
    ]
    loaded = tf.saved_model.load(export_dir.decode())
    served = loaded.signatures["serving_default"](x=tf.constant(FEATURES[:4]))["logits"]
    np.testing.assert_allclose(served.numpy(), np.stack(expected), rtol=1e-6)


def test_host_call_ops_run_with_every_training_step(tmp_path):
    def counting_model_fn(features, labels, mode, params):
        counter = tf.compat.v1.get_variable(
            "host_calls", [], tf.int64, tf.zeros_initializer(), trainable=False
        )
        logits = layers.dense(features["x"], 2)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_or_create_global_step()
        )

        def host_fn(batch_labels):
            return counter.assign_add(tf.size(batch_labels, out_type=tf.int64))

        return tpu.TPUEstimatorSpec(
            mode, loss=loss, train_op=train_op, host_call=(host_fn, [labels])
        )

    estimator = _estimator(tmp_path, model_fn=counting_model_fn)
    estimator.train(input_fn, max_steps=7)
    assert estimator.get_variable_value("host_calls") == 7 * 16


def test_scaffold_fn_runs(tmp_path):
    called = []

    def scaffold_model_fn(features, labels, mode, params):
        spec = model_fn(features, labels, mode, params)

        def scaffold_fn():
            called.append(True)
            return tf.compat.v1.train.Scaffold()

        return spec._replace(scaffold_fn=scaffold_fn)

    _estimator(tmp_path, model_fn=scaffold_model_fn).train(input_fn, max_steps=2)
    assert called


def test_tpu_path_on_a_stand_in_strategy_splits_the_batch_per_replica(
    tmp_path, monkeypatch
):
    cpus = tf.config.list_logical_devices("CPU")
    strategy = tf.distribute.MirroredStrategy([d.name for d in cpus[:2]])
    monkeypatch.setattr(tpu_estimator_module, "connect_tpu", lambda config: strategy)
    SEEN.clear()
    config = tpu.RunConfig(
        model_dir=str(tmp_path), tpu_config=tpu.TPUConfig(iterations_per_loop=4)
    )
    estimator = tpu.TPUEstimator(
        model_fn=no_metrics_model_fn,
        config=config,
        use_tpu=True,
        train_batch_size=16,
        eval_batch_size=32,
        eval_on_tpu=False,
    )
    assert estimator.config.steps_per_loop == 4
    estimator.train(input_fn, max_steps=8)
    assert ("train", 8, True) in SEEN  # 16 over two replicas
    assert estimator.evaluate(eval_input_fn)["global_step"] == 8
    assert ("eval", 16, True) in SEEN
    # Checked, as in 2.15, once the TPU's replicas are known: at first use.
    odd = tpu.TPUEstimator(
        model_fn=model_fn, config=config, use_tpu=True, train_batch_size=15
    )
    with pytest.raises(
        ValueError, match="train batch size 15 must be divisible by number of replicas 2"
    ):
        odd.train(input_fn, max_steps=1)


def test_use_tpu_without_a_tpu_fails_clearly(tmp_path):
    code = (
        "from keras_estimator.compat.estimator import tpu\n"
        "def model_fn(features, labels, mode, params): pass\n"
        "est = tpu.TPUEstimator(model_fn=model_fn, config=tpu.RunConfig(), train_batch_size=8)\n"
        "try:\n"
        "    est.train(lambda params: None, steps=1)\n"
        "except ValueError as e:\n"
        "    print('ERR', e)\n"
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert "ERR No TPU found" in out.stdout, out.stdout + out.stderr[-2000:]


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (
            dict(config=None),
            "`config` must be provided with type `tpu_config.RunConfig`",
        ),
        (dict(params={"batch_size": 3}), "reserved keys"),
        (
            dict(use_tpu=True, train_batch_size=None),
            "`train_batch_size` cannot be `None`",
        ),
        (
            dict(use_tpu=True, eval_batch_size=0),
            "eval_batch_size must be positive, got 0",
        ),
        (
            dict(embedding_config_spec=tpu.experimental.EmbeddingConfigSpec()),
            "embedding_config_spec is not supported",
        ),
        (dict(export_saved_model_api_version=3), "should be 1 or 2; got 3"),
    ],
)
def test_bad_arguments_fail_clearly(tmp_path, kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        _estimator(tmp_path, **kwargs)


def test_input_fn_without_params_fails_clearly(tmp_path):
    with pytest.raises(
        ValueError, match="input_fn .* does not include params argument"
    ):
        _estimator(tmp_path).train(lambda: input_fn({"batch_size": 4}), max_steps=1)


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (
            dict(iterations_per_loop=0),
            "`iterations_per_loop` value. Value must be positive",
        ),
        (dict(iterations_per_loop="5x"), "iterations_per_loop"),
        (dict(num_shards=-1), "num_shards must be positive"),
        (dict(num_cores_per_replica=3), "num_cores_per_replica must be 1, 2, 4"),
        (dict(input_partition_dims=[[1, 2]]), "only supported in PER_HOST_V2 mode"),
        (dict(eval_training_input_configuration=3), "PER_HOST_V1 or SLICED"),
    ],
)
def test_tpu_config_checks(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        tpu.TPUConfig(**kwargs)


def test_tpu_config_and_run_config_values():
    config = tpu.TPUConfig(iterations_per_loop="2m", per_host_input_for_training=False)
    assert config.per_host_input_for_training == tpu.InputPipelineConfig.PER_SHARD_V1
    assert tpu_config_module.parse_iterations_per_loop("2m") == (120, "seconds")
    run_config = tpu.RunConfig(tpu_config=config, master="grpc://127.0.0.1:8470")
    assert run_config.master == run_config.evaluation_master == "grpc://127.0.0.1:8470"
    replaced = run_config.replace(save_summary_steps=7)
    assert replaced.tpu_config is config and replaced.save_summary_steps == 7
    assert (
        run_config.replace(tpu_config=tpu.TPUConfig(5)).tpu_config.iterations_per_loop
        == 5
    )
    with pytest.raises(ValueError, match="Both master"):
        tpu.RunConfig(master="a", cluster=object())
    os.environ["TF_CONFIG"] = json.dumps({"service": {"tpu_worker_job_name": "my_tpu"}})
    try:
        assert tpu.TPUConfig().tpu_job_name == "my_tpu"
    finally:
        del os.environ["TF_CONFIG"]


def test_tpu_estimator_spec_checks():
    with pytest.raises(
        TypeError, match="eval_metrics must be a \\(function, tensors\\) pair"
    ):
        tpu.TPUEstimatorSpec("eval", eval_metrics={"a": 1})
    with pytest.raises(ValueError, match="keys must be its parameter names"):
        tpu.TPUEstimatorSpec("eval", eval_metrics=(lambda labels: {}, {"logits": 1}))
    with pytest.raises(TypeError, match="SessionRunHook"):
        tpu.TPUEstimatorSpec("train", training_hooks=[object()])
    with pytest.raises(TypeError, match="scaffold_fn must be a function"):
        tpu.TPUEstimatorSpec("train", scaffold_fn=3)


def _event_steps(model_dir):
    steps = {}
    for path in sorted(tf.io.gfile.glob(os.path.join(model_dir, "events.out*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                steps.setdefault(value.tag, []).append(event.step)
    return steps


@pytest.mark.parametrize(
    "iterations_per_loop, counted_at",
    # 2.15's event files: every ceil(100 / iterations_per_loop) steps.
    [(1000, list(range(2, 101))), (2, [51])],
)
def test_examples_per_second_replaces_the_step_counter_as_in_2_15(
    tmp_path, caplog, iterations_per_loop, counted_at
):
    config = tpu.RunConfig(
        model_dir=str(tmp_path),
        tpu_config=tpu.TPUConfig(iterations_per_loop=iterations_per_loop),
    )
    est = _estimator(tmp_path, config=config, train_batch_size=8)
    # 2.15 took log_step_count_steps away from the Estimator it built on.
    assert est.config.log_step_count_steps is None
    with caplog.at_level("INFO", logger="keras_estimator"):
        est.train(input_fn, max_steps=100)

    steps = _event_steps(str(tmp_path))
    assert steps["global_step/sec"] == counted_at
    assert steps["examples/sec"] == counted_at
    assert steps["loss"] == [1]
    messages = [record.getMessage() for record in caplog.records]
    assert sum(m.startswith("examples/sec: ") for m in messages) == len(counted_at)
    # No "loss = ..., step = ..." lines: 2.15 turned that hook off too.
    assert not [m for m in messages if m.startswith("loss = ")]


def test_examples_per_second_is_the_batch_times_the_step_rate(tmp_path):
    hook = tpu_estimator_module.ExamplesPerSecondHook(8, every_n_steps=1, output_dir=str(tmp_path))
    hook._log_and_record(10, 2.0, 7)
    hook.end(None)
    values = {}
    for path in tf.io.gfile.glob(os.path.join(str(tmp_path), "events.out*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                values[value.tag] = (event.step, value.simple_value)
    assert values == {"global_step/sec": (7, 5.0), "examples/sec": (7, 40.0)}
