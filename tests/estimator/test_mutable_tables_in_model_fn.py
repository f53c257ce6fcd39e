"""A mutable lookup table made in a model_fn is one table, saved in checkpoints, as in 2.15.

tf.estimator 2.15 (tensorflow-cpu 2.15.1, tensorflow-estimator 2.15.0), on
the program below (a `MutableHashTable` named "seen" that each training
step inserts its key into, value 10 * key, fed 1, 2, 3): the table's size
after each step was 1, 2, 3; evaluation found size 3; prediction of keys
1, 2, 5 found 10, 20 and the default -1; the checkpoint held `seen-keys`
and `seen-values` (3 each) beside `global_step` and `w`. Here each traced
function had its own table (sizes 1, 2, 1 in training), and nothing was
saved.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator

SIZES_AFTER_EACH_STEP = [1, 2, 3]
PREDICTED = [10.0, 20.0, -1.0]


class _Sizes(keras_estimator.SessionRunHook):
    def __init__(self, size, seen):
        self._size, self._seen = size, seen

    def before_run(self, run_context):
        return keras_estimator.SessionRunArgs(self._size)

    def after_run(self, run_context, run_values):
        self._seen.append(int(run_values.results))


def model_fn_with(sizes, kind="mutable", checkpoint=True):
    def model_fn(features, labels, mode):
        if kind == "mutable":
            table = tf.lookup.experimental.MutableHashTable(
                tf.int64, tf.float32, default_value=-1.0, name="seen", checkpoint=checkpoint
            )
        else:
            table = tf.lookup.experimental.DenseHashTable(
                tf.int64, tf.float32, default_value=-1.0, empty_key=-7, deleted_key=-8,
                name="seen", checkpoint=checkpoint,
            )
        w = tf.compat.v1.get_variable("w", [1], initializer=tf.compat.v1.zeros_initializer())
        keys = tf.reshape(features["k"], [-1])
        found = table.lookup(keys)
        if mode == keras_estimator.ModeKeys.PREDICT:
            return keras_estimator.EstimatorSpec(
                mode, predictions={"found": found},
                export_outputs={"found": keras_estimator.export.PredictOutput({"found": found})},
            )
        loss = tf.square(tf.reduce_sum(found) + w[0])
        step = tf.compat.v1.train.get_or_create_global_step()
        with tf.control_dependencies([table.insert(keys, tf.cast(keys, tf.float32) * 10.0)]):
            train_op = tf.compat.v1.assign_add(step, 1)
        size = tf.cast(table.size(), tf.float32)
        return keras_estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op,
            training_hooks=[_Sizes(size, sizes)],
            eval_metric_ops={"size": tf.compat.v1.metrics.mean(size)},
        )

    return model_fn


def train_input_fn():
    features = {"k": np.array([[1], [2], [3]], np.int64)}
    return tf.data.Dataset.from_tensor_slices((features, np.zeros(3, np.float32))).batch(1)


def predict_input_fn():
    return tf.data.Dataset.from_tensor_slices({"k": np.array([[1], [2], [5]], np.int64)}).batch(1)


def predicted(est):
    return [p["found"].tolist() for p in est.predict(predict_input_fn)]


@pytest.mark.parametrize("kind", ["mutable", "dense"])
def test_training_evaluation_and_prediction_see_one_table_as_in_2_15(kind, tmp_path):
    sizes = []
    est = keras_estimator.Estimator(model_fn_with(sizes, kind), str(tmp_path))
    est.train(train_input_fn, steps=3)
    assert sizes == SIZES_AFTER_EACH_STEP
    assert est.evaluate(train_input_fn, steps=1)["size"] == 3.0
    assert predicted(est) == PREDICTED


def test_the_checkpoint_holds_the_table_under_2_15s_keys_and_a_new_estimator_reads_it(tmp_path):
    est = keras_estimator.Estimator(model_fn_with([]), str(tmp_path))
    est.train(train_input_fn, steps=3)
    stored = dict(tf.train.list_variables(est.latest_checkpoint()))
    assert stored["seen-keys"] == [3] and stored["seen-values"] == [3]
    keys = tf.train.load_variable(est.latest_checkpoint(), "seen-keys")
    assert sorted(keys.tolist()) == [1, 2, 3]
    # Another Estimator (as a new process would) reads the table back.
    again = keras_estimator.Estimator(model_fn_with([]), str(tmp_path))
    assert predicted(again) == PREDICTED
    sizes = []
    resumed = keras_estimator.Estimator(model_fn_with(sizes), str(tmp_path))
    resumed.train(train_input_fn, steps=1)
    assert sizes == [3]  # key 1 again: still three keys


def test_a_table_made_with_checkpoint_false_is_shared_but_not_saved(tmp_path):
    sizes = []
    est = keras_estimator.Estimator(model_fn_with(sizes, checkpoint=False), str(tmp_path))
    est.train(train_input_fn, steps=3)
    assert sizes == SIZES_AFTER_EACH_STEP
    stored = dict(tf.train.list_variables(est.latest_checkpoint()))
    assert "seen-keys" not in stored
    again = keras_estimator.Estimator(model_fn_with([], checkpoint=False), str(tmp_path))
    assert predicted(again) == [-1.0, -1.0, -1.0]


def test_the_export_serves_the_trained_table(tmp_path):
    est = keras_estimator.Estimator(model_fn_with([]), str(tmp_path / "model"))
    est.train(train_input_fn, steps=3)

    def receiver_fn():
        k = tf.compat.v1.placeholder(tf.int64, [None, 1], name="k")
        return keras_estimator.export.ServingInputReceiver({"k": k}, {"k": k})

    export_dir = est.export_saved_model(str(tmp_path / "export"), receiver_fn).decode()
    loaded = tf.saved_model.load(export_dir)
    out = loaded.signatures["serving_default"](k=tf.constant([[1], [2], [5]], tf.int64))
    np.testing.assert_array_equal(out["found"].numpy(), [10.0, 20.0, -1.0])

