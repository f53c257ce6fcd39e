"""Estimators on separate MirroredStrategy objects in one process.

Every MirroredStrategy numbers its all-reduce collectives from the same keys,
and TensorFlow remembers each key's shape process-wide: without keys of its
own, a second strategy whose first all-reduce has another shape fails with
"Shape mismatch in the collective instance 100"."""

import numpy as np
import tensorflow as tf

import keras_estimator
from keras_estimator._src.tf_internals import collective_keys
from tests._models import input_fn, make_data, mlp_model_fn

DEVICES = ["/cpu:0", "/cpu:1"]


def test_estimators_on_separate_mirrored_strategies(tmp_path):
    x, y = make_data()
    for index, hidden in enumerate([[3], [5, 4], [7]]):
        strategy = tf.distribute.MirroredStrategy(DEVICES)
        estimator = keras_estimator.Estimator(
            mlp_model_fn,
            str(tmp_path / str(index)),
            config=keras_estimator.RunConfig(train_distribute=strategy),
            params={"hidden": hidden},
        )
        estimator.train(input_fn(x, y), steps=3)
        assert estimator.get_variable_value("global_step") == 3


def test_a_strategy_that_ran_collectives_keeps_its_keys():
    strategy = tf.distribute.MirroredStrategy(DEVICES)

    @tf.function
    def all_reduce():
        def step():
            return tf.distribute.get_replica_context().all_reduce("sum", tf.ones([2]))

        return strategy.run(step)

    assert collective_keys.own_keys(strategy)
    assert not collective_keys.own_keys(strategy)  # once per strategy
    reduced = strategy.experimental_local_results(all_reduce())
    np.testing.assert_array_equal(reduced[0].numpy(), [2.0, 2.0])

    # A strategy whose keys were handed out (its collectives exist) keeps them.
    used = tf.distribute.MirroredStrategy(DEVICES)
    keys = used.extended._collective_keys
    group = keys.get_group_key(list(used.extended.worker_devices))
    keys.get_instance_key(group, used.extended.worker_devices[0])
    assert not collective_keys.own_keys(used)
    assert used.extended._collective_keys is keys


def test_other_strategies_are_left_alone():
    assert not collective_keys.own_keys(tf.distribute.get_strategy())
    assert not collective_keys.own_keys(tf.distribute.OneDeviceStrategy("/cpu:0"))
