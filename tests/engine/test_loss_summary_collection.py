"""The training loss in the graph's TF1 summaries, where tf.estimator 2.15's train() put it.

2.15 added `tf.compat.v1.summary.scalar('loss', spec.loss)` to
`GraphKeys.SUMMARIES` after model_fn returned and before any hook's
`begin()`, unless the collection held a summary op named `loss` already (the
model_fn's own); evaluate() added none. A hook fetching `merge_all()` saw it,
and model_dir's summary hook wrote it once per summary step, through
`merge_all()`. Its tag is its op's name, made unique by TF1: `loss_1` when
the model_fn named a tensor `loss`.

Expected values: the program below (`_model_fn`, `_input_fn`, the hooks,
`tf_random_seed=1`, `save_summary_steps=2`, `train(steps=4)`,
`evaluate(steps=2)`) run on tensorflow 2.15.1 + tensorflow-estimator 2.15.0
with `tf.estimator` in place of `keras_estimator`.
"""

from __future__ import annotations

import glob
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke


class _MergeAllHook(tf.compat.v1.train.SessionRunHook):
    """Fetches `merge_all()` on every step; keeps each step's scalars."""

    def begin(self):
        self.collected = _collected()
        self._summary = tf.compat.v1.summary.merge_all()
        self.scalars = []

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs({"summary": self._summary})

    def after_run(self, run_context, run_values):
        summary = tf.compat.v1.Summary.FromString(run_values.results["summary"])
        self.scalars.append(
            [
                (v.tag, v.simple_value)
                for v in summary.value
                if v.HasField("simple_value")
            ]
        )


class _CollectionHook(tf.compat.v1.train.SessionRunHook):
    """Keeps the op names of the summaries a hook's begin() finds in SUMMARIES."""

    def begin(self):
        self.collected = _collected()


def _collected():
    return [
        t.op.name for t in tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)
    ]


def _loss_events(model_dir):
    """(step, tag, simple_value) of model_dir's values tagged like a loss, in file order."""
    written = []
    for path in sorted(glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            written += [
                (event.step, v.tag, v.simple_value)
                for v in event.summary.value
                if "loss" in v.tag
            ]
    return written


def _input_fn():
    x = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5], [-2.0, 1.0]], np.float32)
    y = np.array([[1.0], [2.0], [0.0], [-1.0]], np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(2)


def _model_fn(own_loss_summary=False, loss_name=None, scope=None):
    """A linear model_fn; it may summarize 10 * loss as 'loss' itself, or name its loss."""

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable(
            "w", shape=[2, 1], initializer=tf.compat.v1.ones_initializer()
        )
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
        if loss_name:
            loss = tf.identity(loss, name=loss_name)
        if own_loss_summary and scope:
            with tf.name_scope(scope):
                tf.compat.v1.summary.scalar("loss", loss * 10.0)
        elif own_loss_summary:
            tf.compat.v1.summary.scalar("loss", loss * 10.0)
        tf.compat.v1.summary.scalar("w_sum", tf.reduce_sum(w))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.05).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return ke.EstimatorSpec(
            mode,
            loss=loss,
            train_op=train_op,
            eval_metric_ops={"m": tf.compat.v1.metrics.mean(loss)},
        )

    return model_fn


_CONFIG = {"save_summary_steps": 2, "tf_random_seed": 1}
_LOSSES = (2.0, 0.36125, 1.04156, 0.265515)  # the step's loss, steps 1-4
_OWN = (20.0, 3.6125, 10.415601, 2.655154)  # the model_fn's 10 * loss
_W_SUM = (2.0, 1.7, 1.6575, 1.456312)


def _steps(*columns):
    """Each step's (tag, value) list from (tag, values of steps 1-4) columns."""
    return [[(tag, values[step]) for tag, values in columns] for step in range(4)]


# case -> (model_fn arguments, 2.15's merge_all() scalars at each step,
#          model_dir's loss events, SUMMARIES seen by train's and evaluate's hooks).
_CASES = {
    "estimator_adds_loss": (
        {},
        _steps(("w_sum", _W_SUM), ("loss", _LOSSES)),
        [(1, "loss", 2.0), (3, "loss", 1.04156)],
        ["w_sum", "loss"],
        ["w_sum"],
    ),
    "model_fns_own_loss_only": (
        {"own_loss_summary": True},
        _steps(("loss", _OWN), ("w_sum", _W_SUM)),
        [(1, "loss", 20.0), (3, "loss", 10.415601)],
        ["loss", "w_sum"],
        ["loss", "w_sum"],
    ),
    "own_loss_in_a_name_scope": (
        {"own_loss_summary": True, "scope": "x"},
        _steps(("x/loss", _OWN), ("w_sum", _W_SUM), ("loss", _LOSSES)),
        [
            (1, "x/loss", 20.0),
            (1, "loss", 2.0),
            (3, "x/loss", 10.415601),
            (3, "loss", 1.04156),
        ],
        ["x/loss", "w_sum", "loss"],
        ["x/loss", "w_sum"],
    ),
    "loss_tensor_named_loss": (
        {"loss_name": "loss"},
        _steps(("w_sum", _W_SUM), ("loss_1", _LOSSES)),
        [(1, "loss_1", 2.0), (3, "loss_1", 1.04156)],
        ["w_sum", "loss_1"],
        ["w_sum"],
    ),
    "own_loss_and_loss_tensor_named_loss": (
        {"own_loss_summary": True, "loss_name": "loss"},
        _steps(("loss_1", _OWN), ("w_sum", _W_SUM), ("loss_2", _LOSSES)),
        [
            (1, "loss_1", 20.0),
            (1, "loss_2", 2.0),
            (3, "loss_1", 10.415601),
            (3, "loss_2", 1.04156),
        ],
        ["loss_1", "w_sum", "loss_2"],
        ["loss_1", "w_sum"],
    ),
}


def _assert_scalars(got, expected):
    assert [[tag for tag, _ in step] for step in got] == [
        [tag for tag, _ in step] for step in expected
    ]
    np.testing.assert_allclose(
        [[value for _, value in step] for step in got],
        [[value for _, value in step] for step in expected],
        rtol=1e-5,
    )


def _assert_events(got, expected):
    assert [(step, tag) for step, tag, _ in got] == [
        (step, tag) for step, tag, _ in expected
    ]
    np.testing.assert_allclose(
        [v for *_, v in got], [v for *_, v in expected], rtol=1e-5
    )


@pytest.mark.parametrize("case", sorted(_CASES))
def test_loss_summary_is_in_summaries_as_in_2_15(tmp_path, case):
    kwargs, scalars, events, train_collected, eval_collected = _CASES[case]
    estimator = ke.Estimator(
        _model_fn(**kwargs), model_dir=str(tmp_path), config=ke.RunConfig(**_CONFIG)
    )
    merging = _MergeAllHook()
    estimator.train(_input_fn, steps=4, hooks=[merging])
    assert merging.collected == train_collected
    _assert_scalars(merging.scalars, scalars)
    # One loss value per summary step (the model_fn's, when it made one).
    _assert_events(_loss_events(str(tmp_path)), events)

    # evaluate() adds no loss summary: its hooks see the model_fn's alone.
    looking = _CollectionHook()
    estimator.evaluate(_input_fn, steps=2, hooks=[looking])
    assert looking.collected == eval_collected


def test_canned_dnn_regressors_merge_all_holds_the_loss(tmp_path):
    # tf.estimator 2.15's own DNN tests (dnn_testing_utils._SummaryHook)
    # fetch merge_all() and look for 'loss' at every step.
    estimator = ke.DNNRegressor(
        hidden_units=[3],
        feature_columns=[tf.feature_column.numeric_column("x", shape=(2,))],
        model_dir=str(tmp_path),
        config=ke.RunConfig(**_CONFIG),
    )
    merging = _MergeAllHook()
    estimator.train(_input_fn, steps=4, hooks=[merging])
    assert merging.collected[-1] == "loss"
    _assert_scalars(
        merging.scalars,
        _steps(
            (
                "dnn/hiddenlayer_0/fraction_of_zero_values",
                (0.5, 0.666667, 0.5, 0.666667),
            ),
            ("dnn/logits/fraction_of_zero_values", (0.0, 0.0, 0.0, 0.0)),
            ("loss", (31.325247, 0.126498, 31.190516, 0.12543)),
        ),
    )
    _assert_events(
        _loss_events(str(tmp_path)), [(1, "loss", 31.325247), (3, "loss", 31.190516)]
    )

    looking = _CollectionHook()
    estimator.evaluate(_input_fn, steps=2, hooks=[looking])
    assert len(looking.collected) == 4 and "loss" not in looking.collected


def test_model_to_estimators_loss_summary_is_loss_1_as_in_2_15(tmp_path):
    # 2.15's model_to_estimator built the Keras loss under the name scope
    # 'loss', so its train() summarized the loss as 'loss_1' (a Dense(1)
    # model compiled with 'sgd' and 'mse', save_summary_steps=1: 'loss_1' at
    # steps 1 and 2, nothing tagged 'loss'). Here the model's loss tensor is
    # named 'loss', which makes the same tag.
    model = keras.Sequential(
        [keras.Input((2,), name="d_input"), keras.layers.Dense(1, name="d")]
    )
    model.compile("sgd", "mse")
    estimator = ke.model_to_estimator(
        model, model_dir=str(tmp_path), config=ke.RunConfig(save_summary_steps=1)
    )

    def input_fn():
        x = np.ones((4, 2), np.float32)
        return (
            tf.data.Dataset.from_tensor_slices(
                ({"d_input": x}, np.ones((4, 1), np.float32))
            )
            .repeat()
            .batch(2)
        )

    looking = _CollectionHook()
    estimator.train(input_fn, steps=2, hooks=[looking])
    assert looking.collected == ["loss_1"]
    assert [(step, tag) for step, tag, _ in _loss_events(str(tmp_path))] == [
        (1, "loss_1"),
        (2, "loss_1"),
    ]
