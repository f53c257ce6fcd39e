"""A TF_CONFIG whose "cluster" lists the evaluator, as tf.estimator 2.15 accepted it.

2.15's own distribute_strategy_estimator_training_test.py runs its clusters
with the evaluator in "cluster" (multi_process_runner.create_cluster_spec(
has_eval=True)); 2.15's RunConfig took that layout with or without a strategy.
The values below are what 2.15's RunConfig gave for the same TF_CONFIG.
"""

import json

import pytest

import keras_estimator as ke
from keras_estimator.experimental import multi_worker_strategy
from tests._run_configs import cluster_properties

CLUSTER = {
    "chief": ["127.0.0.1:5"],
    "worker": ["127.0.0.1:1", "127.0.0.1:2"],
    "evaluator": ["127.0.0.1:4"],
}


def _config(monkeypatch, task_type, index, cluster=CLUSTER):
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}}),
    )
    return ke.RunConfig()


@pytest.mark.parametrize(
    "task_type, index, expected",
    [
        # 2.15: ('chief', 0, 'grpc://127.0.0.1:5', 3, 0, True, 0)
        ("chief", 0, ("chief", 0, "grpc://127.0.0.1:5", 3, 0, True, 0)),
        # 2.15 numbers the evaluator among the other jobs by name: worker 1 is 3.
        ("worker", 0, ("worker", 0, "grpc://127.0.0.1:1", 3, 0, False, 2)),
        ("worker", 1, ("worker", 1, "grpc://127.0.0.1:2", 3, 0, False, 3)),
        # 2.15: ('evaluator', 0, '', 0, 0, False, None)
        ("evaluator", 0, ("evaluator", 0, "", 0, 0, False, None)),
    ],
)
def test_an_evaluator_listed_in_cluster_is_accepted_as_2_15(
    monkeypatch, task_type, index, expected
):
    assert cluster_properties(_config(monkeypatch, task_type, index)) == expected


def test_the_training_cluster_leaves_the_evaluator_out(monkeypatch):
    config = _config(monkeypatch, "worker", 1)
    assert config.cluster_spec.as_dict() == {
        "chief": ["127.0.0.1:5"],
        "worker": ["127.0.0.1:1", "127.0.0.1:2"],
    }


def test_two_evaluators_listed_are_accepted_as_2_15(monkeypatch):
    cluster = dict(CLUSTER, evaluator=["127.0.0.1:4", "127.0.0.1:6"])
    config = _config(monkeypatch, "chief", 0, cluster)
    assert cluster_properties(config) == ("chief", 0, "grpc://127.0.0.1:5", 3, 0, True, 0)


def test_the_strategy_helper_makes_none_for_a_listed_evaluator(monkeypatch):
    _config(monkeypatch, "evaluator", 0)
    assert multi_worker_strategy() is None


def test_a_listed_evaluator_keeps_the_address_checks(monkeypatch):
    cluster = dict(CLUSTER, evaluator=["127.0.0.1:5"])
    with pytest.raises(ValueError, match="have the same address '127.0.0.1:5'"):
        _config(monkeypatch, "chief", 0, cluster)
