"""`tf.train.Checkpoint(...).restore(path)` called in a TRAIN model_fn.

tf.estimator 2.15 (tensorflow-cpu 2.15.1, tensorflow-estimator 2.15.0), on
the program below: a Dense(1) layer made in the model_fn, restored from an
object-based checkpoint of a layer with kernel 1 and bias 5, trained with a
learning rate of 0. Without anything running the restore, 2.15 trained from
the initializers (bias 0 after training); with
`Scaffold(init_fn=lambda scaffold, session: status.run_restore_ops(session))`
it restored (bias 5). The call itself used to fail inside TensorFlow
("Tensor is unhashable").
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator

v1 = tf.compat.v1


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    layer = keras.layers.Dense(
        1, kernel_initializer="ones", bias_initializer=keras.initializers.Constant(5.0)
    )
    layer.build((None, 2))
    return tf.train.Checkpoint(layer=layer).save(
        str(tmp_path_factory.mktemp("pretrained") / "ckpt")
    )


def input_fn():
    x = {"x": np.ones((4, 2), np.float32)}
    y = np.zeros((4, 1), np.float32)
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(4).repeat()


def model_fn_restoring(path, run=None, read=False, asks=(), key="layer"):
    """The program's model_fn; `run` names the status method its init_fn calls."""

    def model_fn(features, labels, mode):
        layer = keras.layers.Dense(1)
        out = layer(features["x"])
        scaffold = None
        if mode == keras_estimator.ModeKeys.TRAIN:
            checkpoint = tf.train.Checkpoint(**{key: layer})
            status = checkpoint.read(path) if read else checkpoint.restore(path)
            for ask in asks:
                status = getattr(status, ask)() or status
            if run is not None:
                scaffold = v1.train.Scaffold(
                    init_fn=lambda scaffold, session: getattr(status, run)(session)
                )
        if mode == keras_estimator.ModeKeys.PREDICT:
            return keras_estimator.EstimatorSpec(mode, predictions={"out": out})
        loss = tf.reduce_mean(tf.square(out - labels))
        train_op = v1.train.GradientDescentOptimizer(0.0).minimize(
            loss, global_step=v1.train.get_or_create_global_step()
        )
        return keras_estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, predictions={"out": out}, scaffold=scaffold
        )

    return model_fn


def bias(est):
    (name,) = [n for n in est.get_variable_names() if n.endswith("bias")]
    return float(np.ravel(est.get_variable_value(name))[0])


def test_a_restore_nothing_runs_leaves_the_initial_values_as_in_2_15(pretrained, tmp_path):
    est = keras_estimator.Estimator(model_fn_restoring(pretrained), str(tmp_path))
    est.train(input_fn, steps=2)
    assert est.get_variable_value("global_step") == 2
    assert bias(est) == 0.0


@pytest.mark.parametrize(
    ("run", "read", "asks"),
    [
        ("run_restore_ops", False, ()),
        ("initialize_or_restore", False, ("expect_partial",)),
        ("run_restore_ops", True, ("assert_existing_objects_matched",)),
    ],
)
def test_a_restore_the_init_fn_runs_restores_the_layer_as_in_2_15(
    pretrained, tmp_path, run, read, asks
):
    est = keras_estimator.Estimator(
        model_fn_restoring(pretrained, run=run, read=read, asks=asks), str(tmp_path)
    )
    est.train(input_fn, steps=2)
    assert bias(est) == 5.0
    prediction = next(est.predict(lambda: tf.data.Dataset.from_tensors({"x": [[1.0, 2.0]]})))
    assert float(np.ravel(prediction["out"])[0]) == pytest.approx(1.0 + 2.0 + 5.0)
    # model_dir's checkpoint wins on the next call: init_fn runs on a fresh
    # start only, as in 2.15.
    est.train(input_fn, steps=1)
    assert est.get_variable_value("global_step") == 3 and bias(est) == 5.0


def test_an_assertion_asked_in_the_model_fn_holds_when_the_restore_runs(pretrained, tmp_path):
    # The checkpoint names the layer "layer"; under "other" it matches nothing.
    est = keras_estimator.Estimator(
        model_fn_restoring(
            pretrained, run="run_restore_ops", asks=("assert_existing_objects_matched",),
            key="other",
        ),
        str(tmp_path),
    )
    with pytest.raises(AssertionError):
        est.train(input_fn, steps=1)


def test_eager_checkpoint_restores_are_tensorflows_own_outside_a_model_fn(pretrained):
    layer = keras.layers.Dense(1)
    layer.build((None, 2))
    status = tf.train.Checkpoint(layer=layer).restore(pretrained)
    assert type(status).__module__.startswith("tensorflow.")
    assert float(layer.bias.numpy()[0]) == 5.0
