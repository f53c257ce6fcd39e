"""Step counts that are not whole numbers, as tf.estimator 2.15 ran them.

2.15 compared `steps`/`max_steps` with the global step (StopAtStepHook's
`global_step >= start + steps`, the evaluation hook's `evals >= steps`), so
`steps=len(x) / batch_size`, a float in Python 3, ran up to the next whole
step, `True` counted as one step, and TrainSpec/EvalSpec kept the number as
given. Checked in tf.estimator 2.15: train(steps=1.5) ends at global step 2,
train(max_steps=4.5) at 5, evaluate(steps=1.5) runs 2 batches.
"""

import numpy as np
import pytest

import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn

X, Y = make_data()


@pytest.fixture
def estimator(tmp_path):
    return ke.Estimator(mlp_model_fn, model_dir=str(tmp_path), params={"hidden": [4]})


def _batches_seen(estimator, steps):
    seen = []

    class Count(ke.SessionRunHook):
        def after_run(self, run_context, run_values):
            seen.append(1)

    estimator.evaluate(input_fn(X, Y), steps=steps, hooks=[Count()])
    return len(seen)


@pytest.mark.parametrize(
    ("steps", "expected"),
    [(1.5, 2), (np.float32(2.0), 2), (True, 1), (len(X) / 32, 2)],
)
def test_fractional_steps_run_to_the_next_whole_step(estimator, steps, expected):
    estimator.train(input_fn(X, Y), steps=steps)
    assert estimator.get_variable_value("global_step") == expected
    assert _batches_seen(estimator, steps) == expected


def test_fractional_max_steps_train_to_the_next_whole_step(estimator):
    estimator.train(input_fn(X, Y), max_steps=4.5)
    assert estimator.get_variable_value("global_step") == 5
    # At or past max_steps: nothing more to train.
    estimator.train(input_fn(X, Y), max_steps=4.5)
    assert estimator.get_variable_value("global_step") == 5


def test_specs_keep_a_fractional_count_and_train_and_evaluate_runs_it(estimator):
    train_spec = ke.TrainSpec(input_fn(X, Y), max_steps=2.5)
    eval_spec = ke.EvalSpec(input_fn(X, Y), steps=1.5, throttle_secs=0)
    assert (train_spec.max_steps, eval_spec.steps) == (2.5, 1.5)
    metrics, _ = ke.train_and_evaluate(estimator, train_spec, eval_spec)
    assert metrics["global_step"] == 3


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"steps": 0.0}, ValueError, r"Must specify steps > 0, given: 0.0"),
        ({"steps": False}, ValueError, r"Must specify steps > 0, given: False"),
        ({"steps": float("inf")}, ValueError, r"steps=inf is not a finite number of steps"),
        ({"steps": "3"}, TypeError, r"steps must be a number of steps \(an int\), got '3'"),
        ({"steps": 1, "max_steps": 2}, ValueError, r"^Can not provide both steps and max_steps\. Got steps=1"),
    ],
)
def test_bad_step_counts_are_refused_naming_the_value(estimator, kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        estimator.train(input_fn(X, Y), **kwargs)
