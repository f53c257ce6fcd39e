"""A two-worker cluster on this machine: one OS process per task, with TF_CONFIG.

Run: python examples/local_cluster.py [--steps N] [--model-dir DIR] [--no-evaluator]

This does what a cluster manager (Kubernetes' TFJob, Vertex AI, a shell
script) does for a tf.estimator program: it starts the same program once per
task, each with a `TF_CONFIG` naming the cluster and the task's role. The
cluster is a chief and a worker that train together with
MultiWorkerMirroredStrategy, plus an evaluator task that evaluates each new
checkpoint in model_dir and runs an exporter. Addresses are free ports on
127.0.0.1 picked by this launcher. Every task runs `train_and_evaluate`; the
launcher waits for all of them with a time limit (killing any task still
running at the limit, since TensorFlow's servers can ignore SIGTERM) and
reports each task's exit status and result. Each task's log is in
`<model_dir>/task_logs/`.

The same file is the task program: started with `--task`, it reads TF_CONFIG.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

RESULT_PREFIX = "TASK RESULT "


# ---- the launcher (no TensorFlow in this process) ---------------------------------
def free_ports(count: int) -> list[int]:
    """Free ports on 127.0.0.1, held open together so that they differ."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def launch(args: argparse.Namespace) -> int:
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="local_cluster_")
    log_dir = os.path.join(model_dir, "task_logs")
    os.makedirs(log_dir, exist_ok=True)
    chief_port, worker_port = free_ports(2)
    cluster = {
        "chief": [f"127.0.0.1:{chief_port}"],
        "worker": [f"127.0.0.1:{worker_port}"],
    }
    tasks = [("chief", 0), ("worker", 0)]
    if args.evaluator:
        tasks.append(("evaluator", 0))  # not in "cluster": it only reads model_dir
    print(f"cluster: {json.dumps(cluster)}")

    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.update(KERAS_BACKEND="tensorflow", PYTHONUNBUFFERED="1")
    command = [
        sys.executable, os.path.abspath(__file__), "--task",
        "--steps", str(args.steps), "--model-dir", model_dir,
        "--connect-timeout", str(args.connect_timeout),
    ]  # fmt: skip
    running = []
    for task_type, index in tasks:
        name = f"{task_type}_{index}"
        tf_config = {"cluster": cluster, "task": {"type": task_type, "index": index}}
        log_path = os.path.join(log_dir, f"{name}.log")
        log = open(log_path, "w")  # noqa: SIM115 - closed after the wait
        process = subprocess.Popen(
            command, env={**env, "TF_CONFIG": json.dumps(tf_config)},
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        print(f"started {name} (pid {process.pid}), log {log_path}")
        running.append((name, process, log, log_path))

    deadline = time.monotonic() + args.timeout
    failed = 0
    for name, process, log, log_path in running:
        try:
            returncode = process.wait(timeout=max(deadline - time.monotonic(), 0))
            status = f"exit status {returncode}"
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
            returncode = None
            status = f"killed after the {args.timeout:.0f}s limit"
        log.close()
        with open(log_path) as f:
            lines = f.read().splitlines()
        results = [line[len(RESULT_PREFIX):] for line in lines
                   if line.startswith(RESULT_PREFIX)]
        print(f"{name}: {status}; result: {results[-1] if results else None}")
        if returncode != 0:
            failed += 1
            print("\n".join(f"    {line}" for line in lines[-30:]))
    print(f"{len(running) - failed} of {len(running)} tasks succeeded")
    return 1 if failed else 0


# ---- one task of the cluster ---------------------------------------------------------
def run_task(args: argparse.Namespace) -> int:
    from keras_estimator.experimental import multi_worker_strategy

    # First, before TensorFlow runs anything: the strategy for TF_CONFIG's
    # cluster, giving up (with an error naming the chief) if the other tasks
    # do not connect in time. On the evaluator it is None.
    strategy = multi_worker_strategy(connect_timeout_secs=args.connect_timeout)

    import logging
    from importlib import resources

    import numpy as np
    import tensorflow as tf

    import keras_estimator as estimator
    from keras_estimator.compat import layers

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    task = json.loads(os.environ["TF_CONFIG"])["task"]

    text = resources.files("keras_estimator").joinpath("data/iris.csv").read_text()
    rows = np.loadtxt(text.splitlines()[1:], delimiter=",", dtype="float32")
    x, y = rows[:, :4], rows[:, 4].astype("int32")

    def model_fn(features, labels, mode, params):
        hidden = layers.dense(features["x"], 16, activation=tf.nn.relu)
        logits = layers.dense(hidden, 3)
        class_ids = tf.argmax(logits, axis=1)
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions={"class_ids": class_ids})
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        if mode == estimator.ModeKeys.EVAL:
            accuracy = tf.compat.v1.metrics.accuracy(labels, class_ids)
            return estimator.EstimatorSpec(
                mode, loss=loss, eval_metric_ops={"accuracy": accuracy}
            )
        train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def train_input_fn(input_context):
        # Called once per worker: each reads its own shard of the data.
        data = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        data = data.shard(input_context.num_input_pipelines,
                          input_context.input_pipeline_id)
        return data.shuffle(150, seed=0).repeat().batch(16)  # one replica's batch

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(50)

    def serving_input_receiver_fn():
        features = tf.compat.v1.placeholder(tf.float32, [None, 4], name="x")
        return estimator.export.ServingInputReceiver({"x": features}, {"x": features})

    config = estimator.RunConfig(
        train_distribute=strategy, tf_random_seed=1,
        save_checkpoints_steps=max(args.steps // 4, 1),
    )  # fmt: skip
    classifier = estimator.Estimator(model_fn, args.model_dir, config)
    metrics, exports = estimator.train_and_evaluate(
        classifier,
        estimator.TrainSpec(train_input_fn, max_steps=args.steps),
        estimator.EvalSpec(
            eval_input_fn, steps=None, start_delay_secs=0, throttle_secs=0,
            exporters=[estimator.LatestExporter("latest", serving_input_receiver_fn)],
        ),
        # Stop waiting for checkpoints if training died.
        evaluator_timeout_secs=args.connect_timeout,
    )  # fmt: skip
    result = {
        "task": f"{task['type']}_{task['index']}",
        "global_step": int(classifier.get_variable_value("global_step")),
    }
    if metrics is not None:  # the evaluator's final evaluation
        result["accuracy"] = round(float(metrics["accuracy"]), 3)
        result["evaluated_step"] = int(metrics["global_step"])
        result["exports"] = len(exports or [])
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400, help="TrainSpec max_steps")
    parser.add_argument("--model-dir", default=None, help="default: a new temp dir")
    parser.add_argument("--no-evaluator", dest="evaluator", action="store_false",
                        help="start only the chief and the worker")
    parser.add_argument("--timeout", type=float, default=300,
                        help="seconds the launcher waits for all tasks")
    parser.add_argument("--connect-timeout", type=float, default=120,
                        help="seconds a task waits for the others to connect")
    parser.add_argument("--task", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    return run_task(args) if args.task else launch(args)


if __name__ == "__main__":
    sys.exit(main())
