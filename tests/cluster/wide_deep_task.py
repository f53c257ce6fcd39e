"""One task of tf.estimator 2.15's distribute_strategy_estimator_training_test program.

2.15's test trains a `tf.compat.v1.estimator.DNNLinearCombinedRegressor` with
`train_and_evaluate` on a chief, workers and an evaluator, each building
`RunConfig(train_distribute=<a MultiWorkerMirroredStrategy>)`. This is that
program, made deterministic (no shuffle, `tf_random_seed`), with checkpoints
every 5 steps. Run by `launcher.run_tasks(..., script=...)`; the spec's keys:

* `model_dir`, `result_path` (set by the launcher).
* `strategy`: "v2" (`tf.distribute.MultiWorkerMirroredStrategy`) or "v1"
  (`tf.compat.v1.distribute.experimental.MultiWorkerMirroredStrategy`).
* `tf215`: run as a tf.estimator 2.15 program in the reference interpreter
  (TF1 graph mode, as 2.15's test ran; its evaluator could not copy a
  MultiWorkerMirroredStrategy in eager mode). Otherwise this package is
  installed as `tf.estimator` and the program runs unchanged.

The result holds the task, what `train_and_evaluate` returned, and the error
if the task failed.
"""

import json
import os
import pathlib
import sys
import traceback

SPEC = json.loads(pathlib.Path(sys.argv[1]).read_text())
TF_CONFIG = json.loads(os.environ["TF_CONFIG"])
RESULT: dict = {"task": TF_CONFIG["task"]["type"]}

if not SPEC.get("tf215"):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
    import keras_estimator

    keras_estimator.install()

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

if SPEC.get("tf215"):
    tf.compat.v1.disable_eager_execution()

BATCH_SIZE = 10
LABEL_DIMENSION = 2
DATA = np.linspace(0.0, 2.0, BATCH_SIZE * LABEL_DIMENSION, dtype=np.float32).reshape(
    BATCH_SIZE, LABEL_DIMENSION
)
MAX_STEPS = 10


def input_fn_of(batch_size):
    def input_fn():
        data = tf.compat.v1.data.Dataset.from_tensor_slices(({"x": DATA}, DATA))
        return data.repeat(100).batch(batch_size)

    return input_fn


def main():
    if SPEC["strategy"] == "v1":
        strategy = tf.compat.v1.distribute.experimental.MultiWorkerMirroredStrategy()
    else:
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    columns = [tf.compat.v1.feature_column.numeric_column("x", shape=(LABEL_DIMENSION,))]
    estimator = tf.compat.v1.estimator.DNNLinearCombinedRegressor(
        linear_feature_columns=columns,
        dnn_hidden_units=(2, 2),
        dnn_feature_columns=columns,
        label_dimension=LABEL_DIMENSION,
        model_dir=SPEC["model_dir"],
        dnn_optimizer="Adagrad",
        linear_optimizer="Adagrad",
        config=tf.estimator.RunConfig(
            train_distribute=strategy, tf_random_seed=7, save_checkpoints_steps=5
        ),
    )
    feature_spec = tf.compat.v1.feature_column.make_parse_example_spec(columns + columns)
    exporter = tf.estimator.LatestExporter(
        "saved_model_exporter",
        tf.estimator.export.build_parsing_serving_input_receiver_fn(feature_spec),
    )
    train_spec = tf.estimator.TrainSpec(
        input_fn_of(BATCH_SIZE // strategy.num_replicas_in_sync), max_steps=MAX_STEPS
    )
    eval_spec = tf.estimator.EvalSpec(
        input_fn_of(BATCH_SIZE),
        steps=None,
        name="foo",
        exporters=exporter,
        start_delay_secs=0,
        throttle_secs=1,
    )
    returned = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    metrics = returned[0] if returned else None
    RESULT["metrics"] = (
        {key: np.asarray(value).item() for key, value in metrics.items()}
        if metrics is not None
        else None
    )


try:
    main()
except Exception as error:
    RESULT["error"] = f"{type(error).__name__}: {error}"
    traceback.print_exc()
    pathlib.Path(SPEC["result_path"]).write_text(json.dumps(RESULT))
    sys.exit(1)
pathlib.Path(SPEC["result_path"]).write_text(json.dumps(RESULT))
