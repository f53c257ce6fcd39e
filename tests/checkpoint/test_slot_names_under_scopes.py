"""A v1 optimizer's slot names when `minimize` runs inside a scope, as in tf.estimator 2.15.

TF1 named a slot after its variable alone (`w/Adam`) when `minimize` ran
inside a name scope, and under the variable scope when it ran inside one
(`training/w/Adam`); Adam's `beta1_power` took either scope. Inside a name
scope the slots here were named `training/w/Adam`: a model_dir written by
2.15 lost its slots on restore, and 2.15 could not read ours. The expected
names are those 2.15 saved for this model_fn (reference venv).
"""

from __future__ import annotations

import pytest
import tensorflow as tf

import keras_estimator as estimator

SLOTLESS = ["global_step", "outer/v", "vs/u", "w"]
SLOTS = [
    "outer/v/Adam",
    "outer/v/Adam_1",
    "vs/u/Adam",
    "vs/u/Adam_1",
    "w/Adam",
    "w/Adam_1",
]


def _model_fn_minimizing_in(scope):
    def model_fn(features, labels, mode):
        with tf.compat.v1.name_scope("outer"):
            w = tf.compat.v1.get_variable(
                "w", [1, 1], initializer=tf.compat.v1.ones_initializer()
            )
            v = tf.Variable(2.0, name="v")
            with tf.compat.v1.variable_scope("vs"):
                u = tf.compat.v1.get_variable(
                    "u", [1], initializer=tf.compat.v1.ones_initializer()
                )
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) * v + u - labels))
        with scope():
            train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
                loss, tf.compat.v1.train.get_global_step()
            )
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def _input_fn():
    return tf.data.Dataset.from_tensors(
        ({"x": [[1.0], [2.0]]}, [[1.0], [3.0]])
    ).repeat()


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        (
            lambda: tf.compat.v1.name_scope("training"),
            [*SLOTLESS, *SLOTS, "training/beta1_power", "training/beta2_power"],
        ),
        (
            lambda: tf.compat.v1.variable_scope("training"),
            [
                *SLOTLESS,
                *(f"training/{s}" for s in SLOTS),
                "training/beta1_power",
                "training/beta2_power",
            ],
        ),
        (
            lambda: tf.compat.v1.name_scope(None),
            [*SLOTLESS, *SLOTS, "beta1_power", "beta2_power"],
        ),
    ],
    ids=["name-scope", "variable-scope", "no-scope"],
)
def test_slots_are_named_as_2_15_named_them(tmp_path, scope, expected):
    est = estimator.Estimator(_model_fn_minimizing_in(scope), model_dir=str(tmp_path))
    est.train(_input_fn, steps=1)
    assert sorted(est.get_variable_names()) == sorted(expected)
    names = {name for name, _ in tf.train.list_variables(est.latest_checkpoint())}
    assert set(expected) <= names
