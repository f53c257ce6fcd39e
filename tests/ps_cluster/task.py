"""One program for every task of a parameter-server cluster.

Run unchanged on the chief, the workers and the parameter servers, each with
its own `TF_CONFIG`: only the chief creates the ParameterServerStrategy
(creating it connects the process to the cluster as its chief), and
`Estimator.train` on a ps or worker task serves the chief and never returns.
The chief trains, evaluates before and after, and writes what it saw as JSON
to `--result`.

    python -m tests.ps_cluster.task --model_dir D --steps 300 --result R.json
"""

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_estimator as ke  # noqa: E402
from tests._models import make_data, mlp_model_fn  # noqa: E402

PARAMS = {"hidden": [16], "optimizer": "adam", "learning_rate": 0.02}
X, Y = make_data(num_examples=256, seed=3)


def keras_optimizer_model_fn(features, labels, mode, params):
    """An MLP of Keras layers trained by a Keras optimizer (no v1 optimizer)."""
    hidden = keras.layers.Dense(params["hidden"][0], activation="relu", name="hidden")
    output = keras.layers.Dense(3, name="logits")
    logits = output(hidden(features["x"]))
    classes = tf.argmax(logits, 1)
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"logits": logits, "classes": classes})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == ke.ModeKeys.EVAL:
        accuracy = tf.compat.v1.metrics.accuracy(labels, classes)
        return ke.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
    variables = hidden.trainable_variables + output.trainable_variables
    gradients = tf.gradients(loss, variables)
    optimizer = keras.optimizers.Adam(params["learning_rate"])
    train_op = optimizer.apply_gradients(zip(gradients, variables, strict=True))
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def nan_at_40_model_fn(features, labels, mode, params):
    """The MLP, with a NaN loss in the step that starts at global step 40."""
    spec = mlp_model_fn(features, labels, mode, params)
    if mode != ke.ModeKeys.TRAIN:
        return spec
    step = tf.compat.v1.train.get_global_step()
    nan = tf.where(tf.equal(step, 40), tf.constant(float("nan")), tf.constant(0.0))
    return spec._replace(loss=spec.loss + nan)


def counting_model_fn(features, labels, mode, params):
    """The MLP, with an `assign_add` built in TRAIN mode that nothing fetches.

    A TF1 session never ran it (tf.estimator 2.15 left the count at 0).
    """
    spec = mlp_model_fn(features, labels, mode, params)
    count = tf.compat.v1.get_variable(
        "unfetched_count", [], initializer=tf.zeros_initializer(), trainable=False
    )
    if mode == ke.ModeKeys.TRAIN:
        tf.compat.v1.assign_add(count, 1.0)
    return spec


MODEL_FNS = {
    "v1": counting_model_fn,
    "keras": keras_optimizer_model_fn,
    "nan_at_40": nan_at_40_model_fn,
}


INPUT_CONTEXTS = []


def train_input_fn(input_context=None, params=None):
    INPUT_CONTEXTS.append(input_context)
    data = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).shuffle(len(X), seed=1)
    if not params.get("finite"):
        data = data.repeat()
    return data.batch(32)


def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(64)


def predict_input_fn():
    return tf.data.Dataset.from_tensor_slices({"x": X[:16]}).batch(8)


class CountSteps(keras.callbacks.Callback):
    """Adds up the steps of every run and records the global step after each.

    It never asks for a step of its own (`steps_until_needed` is None), so
    runs stay as long as the hooks allow.
    """

    def __init__(self):
        super().__init__()
        self.steps_run = 0
        self.global_steps = []
        self._last = None

    def steps_until_needed(self, global_step):
        return None

    def on_train_begin(self, logs=None):
        # A run resumed from a checkpoint starts at its step, not at 0.
        self._last = int(tf.compat.v1.train.get_global_step().numpy())

    def on_train_batch_end(self, batch, logs=None):
        # A Keras callback sees the model_fn's variables (ModelFnView), not
        # the loop's model: steps are counted by the global step.
        step = int(tf.compat.v1.train.get_global_step().numpy())
        self.steps_run += step - self._last
        self._last = step
        self.global_steps.append(step)


class KillAtStep(ke.SessionRunHook):
    """Kills processes (workers or ps of the cluster) once training passes a step."""

    def __init__(self, pids, step):
        self._pids = pids
        self._step = step
        self.killed_at = None

    def steps_until_needed(self, global_step):
        return None if self.killed_at is not None else max(self._step - global_step, 1)

    def after_run(self, run_context, run_values):
        if self.killed_at is None and run_context.global_step >= self._step:
            for pid in self._pids:
                os.kill(pid, signal.SIGKILL)
            self.killed_at = run_context.global_step


class SigtermAtStep(ke.SessionRunHook):
    """Sends this process (the chief) SIGTERM once training passes a step."""

    def __init__(self, step):
        self._step = step
        self.sent_at = None

    def steps_until_needed(self, global_step):
        return None if self.sent_at is not None else max(self._step - global_step, 1)

    def after_run(self, run_context, run_values):
        if self.sent_at is None and run_context.global_step >= self._step:
            self.sent_at = run_context.global_step
            os.kill(os.getpid(), signal.SIGTERM)


class TouchWhenWaiting(ke.SessionRunHook):
    """Creates a file when the first run after a step begins (the test then signals)."""

    def __init__(self, path, step):
        self._path = path
        self._step = step

    def before_run(self, run_context):
        if run_context.global_step >= self._step and not os.path.exists(self._path):
            with open(self._path, "w"):
                pass


def _exit_when_orphaned(max_lifetime_secs):
    """Ends this task if the test that started it is gone, or after a while.

    ps and worker tasks serve forever; this keeps a crashed or interrupted
    test from leaving them behind.
    """
    parent, deadline = os.getppid(), time.monotonic() + max_lifetime_secs

    def watch():
        while os.getppid() == parent and time.monotonic() < deadline:
            time.sleep(1)
        os._exit(3)

    threading.Thread(target=watch, daemon=True).start()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--model", choices=sorted(MODEL_FNS), default="v1")
    parser.add_argument("--train_calls", type=int, default=1)
    parser.add_argument("--finite", action="store_true", help="one epoch per worker")
    parser.add_argument("--result")
    parser.add_argument("--kill_pid", type=int, action="append")
    parser.add_argument("--kill_at_step", type=int, default=50)
    parser.add_argument("--sigterm_at_step", type=int)
    parser.add_argument("--ready_file", help="created when the run after the kill starts")
    parser.add_argument("--max_lifetime_secs", type=float, default=300)
    args = parser.parse_args()
    _exit_when_orphaned(args.max_lifetime_secs)
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    tf.get_logger().setLevel(logging.WARNING)
    # The package's INFO lines ("loss = ..., step = ...", read by the tests), each
    # once: its logger is a child of TensorFlow's, whose own handler (installed
    # when TensorFlow was imported) would print them a second time.
    package_logger = logging.getLogger("keras_estimator")
    package_logger.setLevel(logging.INFO)
    package_logger.propagate = False
    package_logger.addHandler(logging.StreamHandler(sys.stdout))

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    strategy = None
    if resolver.task_type == "chief":
        strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
    config = ke.RunConfig(
        train_distribute=strategy,
        save_checkpoints_steps=100,
        log_step_count_steps=50,
        tf_random_seed=7,
    )
    params = dict(PARAMS, finite=args.finite)
    model_fn_calls = []

    def model_fn(features, labels, mode, params):
        model_fn_calls.append(mode)
        return MODEL_FNS[args.model](features, labels, mode, params)

    estimator = ke.Estimator(model_fn, args.model_dir, config, params)
    result = {"task_type": config.task_type, "is_chief": config.is_chief}
    if config.task_type == "chief":
        result["before"] = estimator.evaluate(eval_input_fn)
    hooks = []
    if args.kill_pid:
        hooks.append(KillAtStep(args.kill_pid, args.kill_at_step))
    if args.ready_file:
        hooks.append(TouchWhenWaiting(args.ready_file, args.kill_at_step))
    sigterm = SigtermAtStep(args.sigterm_at_step) if args.sigterm_at_step else None
    if sigterm is not None:
        hooks.append(sigterm)
    sigterm_calls: list[int] = []
    if config.task_type == "chief" and (sigterm is not None or args.ready_file):
        # A program that goes on after a preemption notice (to report here)
        # installs its own handler; under the default handling the process
        # would end once the step is saved.
        signal.signal(signal.SIGTERM, lambda signum, frame: sigterm_calls.append(signum))
    counter = CountSteps()
    try:
        # On ps and worker tasks this serves the chief and does not return.
        for _ in range(args.train_calls):
            estimator.train(
                train_input_fn,
                steps=args.steps // args.train_calls,
                hooks=hooks,
                callbacks=[counter],
            )
    except tf.errors.OpError as error:
        result["error"] = {"type": type(error).__name__, "message": error.message}
    except ke.NanLossDuringTrainingError as error:
        result["error"] = {"type": type(error).__name__, "message": str(error)}
    else:
        result["after"] = estimator.evaluate(eval_input_fn)
        result["predicted_logits"] = [
            p["logits"].tolist() for p in estimator.predict(predict_input_fn)
        ]
    result["model_fn_calls"] = model_fn_calls
    result["steps_run"] = counter.steps_run
    result["global_steps"] = counter.global_steps
    result["input_contexts"] = [
        None if c is None else [c.num_input_pipelines, c.input_pipeline_id]
        for c in INPUT_CONTEXTS
    ]
    result["killed_at"] = hooks[0].killed_at if args.kill_pid else None
    result["sigterm_at"] = sigterm.sent_at if sigterm is not None else None
    result["sigterm_handler_calls"] = sigterm_calls
    with open(args.result, "w") as handle:
        json.dump(result, handle, default=float)
    # The coordinator's threads may wait on a lost task; the result is written.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
