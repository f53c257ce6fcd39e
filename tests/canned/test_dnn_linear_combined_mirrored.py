"""DNNLinearCombinedRegressor trained under a MirroredStrategy.

tf.estimator 2.15's own test (canned_estimator_ds_integration_test.py)
trains a wide-and-deep regressor with `train_distribute` set to a
MirroredStrategy, each replica reading half the batch, and expects the
variables of one trained without a strategy.
"""

import numpy as np
import tensorflow as tf

import keras_estimator

DATA = np.linspace(0.0, 2.0, 22, dtype=np.float32).reshape(11, 2)


def input_fn(batch_size):
    def make():
        return tf.data.Dataset.from_tensor_slices(({"x": DATA}, DATA)).repeat(10).batch(batch_size)

    return make


def regressor(model_dir, strategy=None):
    column = tf.feature_column.numeric_column("x", shape=(2,))
    return keras_estimator.DNNLinearCombinedRegressor(
        linear_feature_columns=[column],
        dnn_feature_columns=[column],
        dnn_hidden_units=[2, 2],
        label_dimension=2,
        linear_optimizer="SGD",
        dnn_optimizer="SGD",
        model_dir=str(model_dir),
        config=keras_estimator.RunConfig(
            tf_random_seed=1, train_distribute=strategy, eval_distribute=strategy
        ),
    )


def test_training_under_a_mirrored_strategy_trains_both_parts_as_without(tmp_path):
    # Each part's variables are the ones it made: under the strategy the
    # step's trace found the trainable collection already full, so neither
    # part had variables ("No gradient flows from the loss to any of the
    # variables []").
    alone = regressor(tmp_path / "alone")
    alone.train(input_fn(10))
    mirrored = regressor(
        tmp_path / "mirrored", tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    )
    mirrored.train(input_fn(5))

    names = alone.get_variable_names()
    assert mirrored.get_variable_names() == names
    assert mirrored.get_variable_value("global_step") == alone.get_variable_value("global_step")
    trained = [n for n in names if n.endswith(("kernel", "bias", "weights")) and "/" in n]
    assert any(n.startswith("dnn/") for n in trained) and any(n.startswith("linear/") for n in trained)
    for name in trained:
        np.testing.assert_allclose(
            mirrored.get_variable_value(name), alone.get_variable_value(name), rtol=1e-5, atol=1e-6
        )
