"""TF_CONFIG clusters tf.estimator 2.15's RunConfig took and this one refused.

Addresses without a port (2.15's own tests name their tasks "fake_chief" or
"fake_worker") and, under a `train_distribute` strategy, a cluster without a
"task" (2.15's run_config_test / distribute_strategy_estimator_training_test
`test_previously_unexpected_cluster_spec`). Every expected tuple is what 2.15's
RunConfig gave for the same TF_CONFIG in the reference interpreter: (task_type,
task_id, master, num_worker_replicas, num_ps_replicas, is_chief,
global_id_in_cluster, cluster_spec).
"""

import collections
import json

import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.experimental import multi_worker_strategy
from tests._run_configs import cluster_properties

DistributeConfig = collections.namedtuple(
    "DistributeConfig", ["train_distribute", "eval_distribute", "remote_cluster"]
)


def _run_config(monkeypatch, tf_config, **kwargs):
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
    return ke.RunConfig(**kwargs)


def _properties(config):
    return (*cluster_properties(config), config.cluster_spec.as_dict())


def _mirrored():
    # 2.15's test gives these devices; the strategy is only configured.
    return tf.compat.v1.distribute.MirroredStrategy(["/device:GPU:0", "/device:GPU:1"])


@pytest.mark.parametrize(
    "cluster, task, expected",
    [
        (
            {"chief": ["fake_chief"]},
            ("chief", 0),
            ("chief", 0, "", 1, 0, True, 0, {"chief": ["fake_chief"]}),
        ),
        (
            {"master": ["fake_master"]},
            ("master", 0),
            ("master", 0, "", 1, 0, True, 0, {"master": ["fake_master"]}),
        ),
        (
            {"chief": ["host0"], "worker": ["host1", "host2"]},
            ("worker", 1),
            (
                "worker",
                1,
                "grpc://host2",
                3,
                0,
                False,
                2,
                {"chief": ["host0"], "worker": ["host1", "host2"]},
            ),
        ),
        (
            {"chief": ["host0"], "ps": ["host3"], "worker": ["host1"]},
            ("ps", 0),
            (
                "ps",
                0,
                "grpc://host3",
                2,
                1,
                False,
                2,
                {"chief": ["host0"], "ps": ["host3"], "worker": ["host1"]},
            ),
        ),
    ],
)
def test_addresses_without_a_port_are_taken_as_2_15_took_them(
    monkeypatch, cluster, task, expected
):
    tf_config = {"cluster": cluster, "task": {"type": task[0], "index": task[1]}}
    assert _properties(_run_config(monkeypatch, tf_config)) == expected


@pytest.mark.parametrize(
    "address",
    ["10.0.0.1", "[::1]", "host1:", ":2222", "host1:abc", "host1:99999", "host1:-1"],
)
def test_any_address_names_the_master_as_in_2_15(monkeypatch, address):
    tf_config = {
        "cluster": {"chief": ["host0:1"], "worker": [address]},
        "task": {"type": "worker", "index": 0},
    }
    config = _run_config(monkeypatch, tf_config)
    assert config.master == f"grpc://{address}"
    assert config.cluster_spec.as_dict() == {"chief": ["host0:1"], "worker": [address]}


def test_the_strategy_helper_still_wants_host_and_port(monkeypatch):
    # It connects to the cluster: the address is checked before TensorFlow
    # tries to reach it.
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps(
            {
                "cluster": {"chief": ["fake_chief"]},
                "task": {"type": "chief", "index": 0},
            }
        ),
    )
    with pytest.raises(ValueError, match=r"'fake_chief' is not a 'host:port' address"):
        multi_worker_strategy()


def test_a_cluster_without_a_task_is_taken_under_a_strategy_as_2_15(monkeypatch):
    # 2.15's test_previously_unexpected_cluster_spec, through experimental_distribute.
    config = _run_config(
        monkeypatch,
        {"cluster": {"chief": ["fake_worker"]}},
        experimental_distribute=DistributeConfig(_mirrored(), None, None),
    )
    assert _properties(config) == (
        "worker",
        0,
        "",
        1,
        0,
        True,
        0,
        {"chief": ["fake_worker"]},
    )
    assert config.evaluation_master == ""


def test_a_larger_cluster_without_a_task_under_train_distribute(monkeypatch):
    cluster = {"chief": ["host0:1"], "worker": ["host1:2", "host2:3"]}
    config = _run_config(
        monkeypatch, {"cluster": cluster}, train_distribute=_mirrored()
    )
    assert _properties(config) == ("worker", 0, "", 1, 0, True, 0, cluster)


@pytest.mark.parametrize(
    "cluster, kwargs",
    [
        # No strategy, an eval_distribute only, or a legacy master job: 2.15
        # parsed the task as usual and refused its absence.
        ({"chief": ["fake_worker"]}, {}),
        ({"chief": ["fake_worker"]}, {"eval_distribute": "mirrored"}),
        ({"master": ["m:1"], "worker": ["w:1"]}, {"train_distribute": "mirrored"}),
    ],
)
def test_a_cluster_without_a_task_is_still_refused_where_2_15_refused_it(
    monkeypatch, cluster, kwargs
):
    kwargs = {key: _mirrored() for key in kwargs}
    with pytest.raises(
        ValueError, match=r'^If "cluster" is set in TF_CONFIG, task type must be set\.'
    ):
        _run_config(monkeypatch, {"cluster": cluster}, **kwargs)


def test_train_and_evaluate_asks_for_the_task(monkeypatch, tmp_path):
    # 2.15's train_and_evaluate failed inside its strategy here (an
    # AssertionError under MirroredStrategy); this says what is missing.
    cluster = {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]}
    config = _run_config(
        monkeypatch,
        {"cluster": cluster},
        train_distribute=_mirrored(),
        save_checkpoints_steps=1,
    )

    def model_fn(features, labels, mode):
        raise AssertionError("not called")

    def input_fn():
        raise AssertionError("not called")

    estimator = ke.Estimator(model_fn, str(tmp_path), config)
    with pytest.raises(
        ValueError, match=r"task type must be set\. TF_CONFIG names the cluster"
    ):
        ke.train_and_evaluate(estimator, ke.TrainSpec(input_fn), ke.EvalSpec(input_fn))


def test_train_and_evaluate_asks_for_the_task_its_run_config_lacks(monkeypatch, tmp_path):
    # What train_and_evaluate does is the RunConfig's reading of TF_CONFIG,
    # not the environment's at the time of the call: a program clearing
    # TF_CONFIG after making its RunConfig is still told the task is missing.
    cluster = {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]}
    config = _run_config(monkeypatch, {"cluster": cluster}, train_distribute=_mirrored())
    monkeypatch.delenv("TF_CONFIG")

    def model_fn(features, labels, mode):
        raise AssertionError("not called")

    def input_fn():
        raise AssertionError("not called")

    estimator = ke.Estimator(model_fn, str(tmp_path), config)
    with pytest.raises(ValueError, match=r"task type must be set\. TF_CONFIG names the cluster"):
        ke.train_and_evaluate(estimator, ke.TrainSpec(input_fn), ke.EvalSpec(input_fn))


def test_a_one_task_cluster_without_a_task_trains_and_evaluates_locally(
    monkeypatch, tmp_path
):
    config = _run_config(
        monkeypatch,
        {"cluster": {"chief": ["fake_chief"]}},
        train_distribute=tf.distribute.MirroredStrategy(["/cpu:0"]),
        save_checkpoints_steps=2,
    )

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable(
            "w", [], initializer=tf.compat.v1.zeros_initializer()
        )
        loss = tf.reduce_mean(tf.square(features["x"] * w - labels))
        step = tf.compat.v1.train.get_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
        return tf.data.Dataset.from_tensors(({"x": [1.0, 2.0]}, [2.0, 4.0])).repeat()

    estimator = ke.Estimator(model_fn, str(tmp_path), config)
    metrics, _ = ke.train_and_evaluate(
        estimator, ke.TrainSpec(input_fn, max_steps=2), ke.EvalSpec(input_fn, steps=1)
    )
    assert metrics["global_step"] == 2
