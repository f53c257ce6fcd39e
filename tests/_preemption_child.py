"""Trains the tiny shared model in a process of its own, for the SIGTERM and lock tests.

Usage:
    python tests/_preemption_child.py sigterm DIR_ONE DIR_TWO STEP
        1. Installs a Python SIGTERM handler, then trains in DIR_TWO with
           fused runs while a timer thread sends SIGTERM mid-run.
        2. Puts back SIGTERM's default handling, then runs
           `train_and_evaluate` in DIR_ONE, with a FinalExporter and a hook
           that sends SIGTERM to this process in `after_run` at global step
           STEP (one step per run): the process ends there, exporting
           nothing.
        Prints `hook end <step>` from each hook's `end`, `returned <step>`
        after each `train()` that returns, `user handler <signum>` when the
        user's handler runs, and `restored <bool>` for the handler found
        after `train()`.
    python tests/_preemption_child.py hold DIR RELEASE_FILE
        Trains in DIR, printing `holding <pid>` after the first step, then
        sleeps in each step until RELEASE_FILE exists (at most 60 s).
"""

import os
import signal
import sys
import threading
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tensorflow as tf  # noqa: E402

import keras_estimator as ke  # noqa: E402
from tests import _models  # noqa: E402

# Checkpoints only at the start and where training ends.
CONFIG = ke.RunConfig(
    save_checkpoints_steps=10**6, save_summary_steps=None, log_step_count_steps=None
)


class PrintsEnd(ke.SessionRunHook):
    """Prints the last global step it saw when `end` runs."""

    last_step = -1

    def after_run(self, run_context, run_values):
        self.last_step = run_context.global_step

    def end(self, session):
        print(f"hook end {self.last_step}", flush=True)


class SigtermAtStep(PrintsEnd):
    """Sends SIGTERM to this process once, after the run reaching `step`."""

    def __init__(self, step: int) -> None:
        self._step = step
        self._sent = False

    def after_run(self, run_context, run_values):
        super().after_run(run_context, run_values)
        if not self._sent and run_context.global_step >= self._step:
            self._sent = True
            os.kill(os.getpid(), signal.SIGTERM)


class SigtermMidRun(PrintsEnd):
    """Sends SIGTERM from a thread shortly after training starts; fuses steps."""

    def steps_until_needed(self, global_step):
        return None

    def after_create_session(self, session, coord):
        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM)).start()


class HoldUntil(ke.SessionRunHook):
    def __init__(self, release_file: str) -> None:
        self._release_file = release_file

    def after_run(self, run_context, run_values):
        print(f"holding {os.getpid()}", flush=True)
        deadline = time.monotonic() + 60
        while not os.path.exists(self._release_file) and time.monotonic() < deadline:
            time.sleep(0.05)
        run_context.request_stop()


def estimator(model_dir: str) -> ke.Estimator:
    return ke.Estimator(
        _models.mlp_model_fn, model_dir=model_dir, config=CONFIG, params={"hidden": [4]}
    )


def main() -> None:
    x, y = _models.make_data()
    mode = sys.argv[1]
    if mode == "sigterm":
        dir_one, dir_two, step = sys.argv[2], sys.argv[3], int(sys.argv[4])

        def user_handler(signum, frame):
            print(f"user handler {signum}", flush=True)

        signal.signal(signal.SIGTERM, user_handler)
        trained = estimator(dir_two)
        trained.train(_models.input_fn(x, y), hooks=[SigtermMidRun()], max_steps=10**9)
        print(f"returned {trained.get_variable_value('global_step')}", flush=True)
        print(
            f"restored {signal.getsignal(signal.SIGTERM) is user_handler}", flush=True
        )

        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        trained = estimator(dir_one)
        features = {"x": tf.io.FixedLenFeature([4], tf.float32)}
        exporter = ke.FinalExporter(
            "final", ke.export.build_parsing_serving_input_receiver_fn(features)
        )
        ke.train_and_evaluate(
            trained,
            ke.TrainSpec(
                _models.input_fn(x, y), max_steps=10**6, hooks=[SigtermAtStep(step)]
            ),
            ke.EvalSpec(
                _models.input_fn(x, y, repeat=False), exporters=[exporter], throttle_secs=0
            ),
        )
        print(f"returned {trained.get_variable_value('global_step')}", flush=True)
    elif mode == "hold":
        model_dir, release_file = sys.argv[2], sys.argv[3]
        estimator(model_dir).train(
            _models.input_fn(x, y), hooks=[HoldUntil(release_file)], max_steps=10**6
        )
    else:
        raise ValueError(f"unknown mode {mode!r}: expected 'sigterm' or 'hold'.")


if __name__ == "__main__":
    main()
