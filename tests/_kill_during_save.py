"""Trains the tiny shared model and SIGKILLs itself at a stage of a save.

Usage: python tests/_kill_during_save.py MODEL_DIR STAGE SAVE_NUMBER
    SAVE_STEPS KEEP_MAX MAX_STEPS

The process kills itself the first time STAGE (a stage passed to
`_checkpoint._reached`) is reached during its SAVE_NUMBER-th save (1 is the
checkpoint written when training starts). It prints `saved <step>` after
each completed save and `dying <stage> <step>` just before the kill, so the
parent knows what was on disk. Without a kill it trains to MAX_STEPS.
"""

import os
import signal
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import keras_estimator as ke  # noqa: E402
from keras_estimator._src.checkpoint import checkpoints as _checkpoint  # noqa: E402
from tests import _models  # noqa: E402


def main() -> None:
    model_dir, stage = sys.argv[1], sys.argv[2]
    save_number, save_steps, keep_max, max_steps = map(int, sys.argv[3:7])
    saving = {"count": 0, "step": -1}
    save = _checkpoint.save

    def counted_save(variables, directory, global_step, policy, *basename):
        saving["count"] += 1
        saving["step"] = global_step
        prefix = save(variables, directory, global_step, policy, *basename)
        print(f"saved {global_step}", flush=True)
        return prefix

    def reached(name: str) -> None:
        if name == stage and saving["count"] == save_number:
            print(f"dying {stage} {saving['step']}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    _checkpoint.save = counted_save
    _checkpoint._reached = reached
    config = ke.RunConfig(
        save_checkpoints_steps=save_steps,
        keep_checkpoint_max=keep_max,
        save_summary_steps=None,
        log_step_count_steps=None,
    )
    x, y = _models.make_data()
    estimator = ke.Estimator(
        _models.mlp_model_fn, model_dir=model_dir, config=config, params={"hidden": [4]}
    )
    estimator.train(_models.input_fn(x, y), max_steps=max_steps)


if __name__ == "__main__":
    main()
