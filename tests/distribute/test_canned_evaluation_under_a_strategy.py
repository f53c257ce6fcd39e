"""A canned estimator's evaluate() under train_distribute with eval_distribute unset.

Evaluation then runs outside the strategy, as in tf.estimator 2.15, and holds
the first copy of the strategy's sync-on-read metric variables; the check of
metrics made outside model_fn took those for someone else's ("Mean metric made
outside model_fn"), so the evaluator of every multi-worker train_and_evaluate
of a canned estimator failed (tests/integration/test_multi_worker_evaluator.py).
2.15's figures for the program below (reference interpreter, the same
v1 MirroredStrategy): over the whole input average_loss 0.51021546, loss
5.1021547, prediction/mean 0.40141040, label/mean 1.0; over one batch
0.11987338, 1.1987338, 0.18012881, 0.47368422; global_step 2.
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.compat import estimator as v1_estimator

DATA = np.linspace(0.0, 2.0, 20, dtype=np.float32).reshape(10, 2)


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": DATA}, DATA)).batch(5)


def test_a_v1_wide_and_deep_regressor_evaluates_as_2_15(tmp_path):
    columns = [tf.compat.v1.feature_column.numeric_column("x", shape=(2,))]
    strategy = tf.compat.v1.distribute.MirroredStrategy(
        ["/cpu:0"], cross_device_ops=tf.distribute.ReductionToOneDevice()
    )
    estimator = v1_estimator.DNNLinearCombinedRegressor(
        linear_feature_columns=columns,
        dnn_hidden_units=(2, 2),
        dnn_feature_columns=columns,
        label_dimension=2,
        model_dir=str(tmp_path),
        dnn_optimizer="Adagrad",
        linear_optimizer="Adagrad",
        config=ke.RunConfig(train_distribute=strategy, tf_random_seed=7),
    )
    estimator.train(input_fn, steps=3)
    whole = estimator.evaluate(input_fn)
    assert whole == pytest.approx(
        {
            "average_loss": 0.5102154612541199,
            "label/mean": 1.0,
            "loss": 5.102154731750488,
            "prediction/mean": 0.40141040086746216,
            "global_step": 2,
        },
        rel=1e-6,
    )
    one_batch = estimator.evaluate(input_fn, steps=1)
    assert one_batch == pytest.approx(
        {
            "average_loss": 0.11987338215112686,
            "label/mean": 0.4736842215061188,
            "loss": 1.1987338066101074,
            "prediction/mean": 0.180128812789917,
            "global_step": 2,
        },
        rel=1e-6,
    )
