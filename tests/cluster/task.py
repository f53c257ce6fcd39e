"""One task of a test cluster: reads a JSON spec, trains/evaluates, writes a result.

Run by `launcher.run_tasks` with `TF_CONFIG` set. Spec keys (all optional
but `model_dir` and `result_path`):

* `action`: "train" (Estimator.train, then evaluate/predict/export as asked),
  "train_and_evaluate", or "connect" (only make the strategy).
* `steps`, `max_steps`, `params`, `save_checkpoints_steps`,
  `save_summary_steps`, `log_step_count_steps`, `connect_timeout_secs`,
  `heartbeat_timeout_secs`, `evaluator_timeout_secs`, `throttle_secs`.
* `input`: "context" (input_fn shards with its InputContext),
  "no_context" (no input_context; `shard_policy` sets the dataset's
  auto-shard policy, e.g. "DATA" or "OFF").
* `batch_size`: each replica's batch.
* `busy_hooks`: add hooks that disagree across workers: a seconds-timer
  logging hook on the chief, a per-step fetching hook on workers, and a
  stop request on worker 0 at `stop_on_worker_at`.
* `chief_hook`: the model_fn returns a `training_chief_hooks` hook that
  fetches every step (it must run on the chief only).
* `die_at_step`: {"worker_0": N} kills that task with SIGKILL at step N.
* `sigterm_at_step`: {"chief_0": N} sends that task SIGTERM, from its own
  process, once training reaches step N (a preemption notice). That task
  installs a SIGTERM handler first, as a program that goes on after the
  notice does (it records the call under "sigterm_handler_calls").
* `evaluate`, `predict`, `export`: what to do after training.
* `evaluate_steps`: a list of `steps` values (null for None), each one
  `evaluate(steps=...)` call after training (results under
  "evaluations", in order).
* `eval_input`: "context" (the evaluation's input_fn takes `input_context`
  and shards with it when given one), "data" (its dataset's auto-shard
  policy is DATA); unset: neither.

The result holds the task's name, the global step, the variables of the
latest checkpoint, evaluation metrics, predictions, the input contexts
input_fn got, and the error if the task failed.
"""

import json
import logging
import os
import pathlib
import signal
import sys
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import keras_estimator as ke  # noqa: E402
from keras_estimator.experimental import multi_worker_strategy  # noqa: E402

# The package's INFO logs go to the task's log, which a failing test prints.
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
SPEC = json.loads(pathlib.Path(sys.argv[1]).read_text())
TF_CONFIG = json.loads(os.environ["TF_CONFIG"])
TASK = f"{TF_CONFIG['task']['type']}_{TF_CONFIG['task']['index']}"
RESULT: dict = {"task": TASK, "pid": os.getpid()}
# The mode of every model_fn call, in order (the result's "model_fn_calls").
MODEL_FN_CALLS: list = []


def _plain(value):
    """numpy values (evaluate() returns them, as 2.15 did) as JSON's."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def write_result() -> None:
    RESULT["model_fn_calls"] = MODEL_FN_CALLS
    pathlib.Path(SPEC["result_path"]).write_text(json.dumps(RESULT, default=_plain))


try:
    strategy = multi_worker_strategy(
        connect_timeout_secs=SPEC.get("connect_timeout_secs", 60),
        heartbeat_timeout_secs=SPEC.get("heartbeat_timeout_secs"),
    )
except Exception as error:  # reported to the test, which checks the message
    RESULT["error"] = f"{type(error).__name__}: {error}"
    write_result()
    raise

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from tests._models import make_data, mlp_model_fn  # noqa: E402

X, Y = make_data(num_examples=96)
CONTEXTS: list = []


def train_input_fn_with_context(input_context):
    CONTEXTS.append(
        [
            input_context.num_input_pipelines,
            input_context.input_pipeline_id,
            input_context.num_replicas_in_sync,
        ]
    )
    data = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat()
    data = data.shard(
        input_context.num_input_pipelines, input_context.input_pipeline_id
    )
    return data.batch(SPEC.get("batch_size", 8))


def train_input_fn_without_context():
    data = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat()
    data = data.batch(SPEC.get("batch_size", 8))
    policy = SPEC.get("shard_policy")
    if policy:
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = getattr(
            tf.data.experimental.AutoShardPolicy, policy
        )
        data = data.with_options(options)
    return data


def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16)


def eval_input_fn_with_context(input_context=None):
    """Shards over the input pipelines when given a context (2.15 gave None)."""
    data = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
    if input_context is not None:
        data = data.shard(
            input_context.num_input_pipelines, input_context.input_pipeline_id
        )
    return data.batch(16)


def eval_input_fn_sharded_by_policy():
    data = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = (
        tf.data.experimental.AutoShardPolicy.DATA
    )
    return data.with_options(options)


EVAL_INPUT_FNS = {
    "context": eval_input_fn_with_context,
    "data": eval_input_fn_sharded_by_policy,
}


def serving_input_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, 4], name="x")
    return ke.export.ServingInputReceiver({"x": x}, {"x": x})


class DieAtStep(ke.SessionRunHook):
    """Kills this process once the global step reaches `step`."""

    def __init__(self, step):
        self._step = step

    def steps_until_needed(self, global_step):
        return max(self._step - global_step, 1)

    def after_run(self, run_context, run_values):
        if run_context.global_step >= self._step:
            os.kill(os.getpid(), signal.SIGKILL)


class SigtermAtStep(ke.SessionRunHook):
    """Sends this process SIGTERM once, when the global step reaches `step`."""

    def __init__(self, step):
        self._step = step
        self._sent = False

    def steps_until_needed(self, global_step):
        return None if self._sent else max(self._step - global_step, 1)

    def after_run(self, run_context, run_values):
        if not self._sent and run_context.global_step >= self._step:
            self._sent = True
            RESULT["sigterm_at"] = run_context.global_step
            os.kill(os.getpid(), signal.SIGTERM)


class FetchEveryStep(ke.SessionRunHook):
    def __init__(self):
        self.steps = []

    def before_run(self, run_context):
        return ke.SessionRunArgs("global_step")

    def after_run(self, run_context, run_values):
        self.steps.append(int(run_values.results))


class StopAt(ke.SessionRunHook):
    def __init__(self, step):
        self._step = step

    def steps_until_needed(self, global_step):
        return max(self._step - global_step, 1)

    def after_run(self, run_context, run_values):
        if run_context.global_step >= self._step:
            run_context.request_stop()


CHIEF_HOOK = FetchEveryStep()


def model_fn(features, labels, mode, params):
    """The shared MLP; with `chief_hook`, plus a training_chief_hooks entry."""
    MODEL_FN_CALLS.append(mode)
    spec = mlp_model_fn(features, labels, mode, params)
    if mode == ke.ModeKeys.TRAIN and SPEC.get("chief_hook"):
        spec = spec._replace(training_chief_hooks=[CHIEF_HOOK])
    return spec


def hooks():
    found = []
    is_chief = TF_CONFIG["task"]["type"] == "chief"
    if SPEC.get("busy_hooks"):
        if is_chief:
            found.append(
                ke.LoggingTensorHook({"step": "global_step"}, every_n_secs=0.01)
            )
        else:
            RESULT_HOOKS.append(FetchEveryStep())
            found.append(RESULT_HOOKS[-1])
        if TASK == "worker_0" and SPEC.get("stop_on_worker_at"):
            found.append(StopAt(SPEC["stop_on_worker_at"]))
    die_at = SPEC.get("die_at_step", {}).get(TASK)
    if die_at:
        found.append(DieAtStep(die_at))
    sigterm_at = SPEC.get("sigterm_at_step", {}).get(TASK)
    if sigterm_at:
        found.append(SigtermAtStep(sigterm_at))
        calls = RESULT.setdefault("sigterm_handler_calls", [])
        signal.signal(signal.SIGTERM, lambda signum, frame: calls.append(signum))
    return found


RESULT_HOOKS: list = []


def main():
    if SPEC.get("action") == "connect":
        RESULT["connected"] = strategy is not None
        return
    config = ke.RunConfig(
        tf_random_seed=1,
        train_distribute=strategy,
        save_checkpoints_steps=SPEC.get("save_checkpoints_steps", 5),
        save_summary_steps=SPEC.get("save_summary_steps", 3),
        log_step_count_steps=SPEC.get("log_step_count_steps", 4),
    )
    params = SPEC.get("params", {"hidden": [4], "optimizer": "adam"})
    estimator = ke.Estimator(model_fn, SPEC["model_dir"], config, params)
    input_fn = (
        train_input_fn_with_context
        if SPEC.get("input", "context") == "context"
        else train_input_fn_without_context
    )
    if SPEC.get("action") == "train_and_evaluate":
        exporters = [
            ke.LatestExporter("latest", serving_input_fn, exports_to_keep=None),
            ke.FinalExporter("final", serving_input_fn),
        ]
        metrics, exports = ke.train_and_evaluate(
            estimator,
            ke.TrainSpec(input_fn, max_steps=SPEC["max_steps"], hooks=hooks()),
            ke.EvalSpec(
                eval_input_fn,
                steps=None,
                exporters=exporters,
                start_delay_secs=0,
                throttle_secs=SPEC.get("throttle_secs", 0),
            ),
            evaluator_timeout_secs=SPEC.get("evaluator_timeout_secs"),
        )
        RESULT["metrics"] = metrics
        RESULT["exports"] = [
            None if e is None else os.fsdecode(e) for e in (exports or [])
        ]
    else:
        estimator.train(
            input_fn,
            steps=SPEC.get("steps"),
            max_steps=SPEC.get("max_steps"),
            hooks=hooks(),
        )
    RESULT["contexts"] = CONTEXTS
    RESULT["fetched_steps"] = RESULT_HOOKS[0].steps if RESULT_HOOKS else None
    RESULT["chief_hook_steps"] = CHIEF_HOOK.steps
    latest = estimator.latest_checkpoint()
    if latest is not None:
        RESULT["latest_checkpoint"] = os.path.basename(latest)
        RESULT["variables"] = {
            name: np.asarray(estimator.get_variable_value(name)).tolist()
            for name in estimator.get_variable_names()
        }
    if SPEC.get("evaluate"):
        RESULT["evaluation"] = estimator.evaluate(eval_input_fn)
    if "evaluate_steps" in SPEC:
        RESULT["evaluations"] = [
            estimator.evaluate(
                EVAL_INPUT_FNS.get(SPEC.get("eval_input"), eval_input_fn), steps=steps
            )
            for steps in SPEC["evaluate_steps"]
        ]
    if SPEC.get("predict"):
        RESULT["predictions"] = [
            p["logits"].tolist() for p in estimator.predict(eval_input_fn)
        ][:8]
    if SPEC.get("export"):
        RESULT["export"] = os.fsdecode(
            estimator.export_saved_model(
                os.path.join(SPEC["model_dir"], "export", "manual"), serving_input_fn
            )
        )


try:
    main()
except Exception as error:
    RESULT["error"] = f"{type(error).__name__}: {error}"
    traceback.print_exc()
    write_result()
    sys.exit(1)
write_result()
