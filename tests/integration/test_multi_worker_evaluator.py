"""tf.estimator 2.15's multi-worker `train_and_evaluate` of a canned estimator, chief + worker + evaluator.

The program of 2.15's distribute_strategy_estimator_training_test
(`tests/cluster/wide_deep_task.py`: a v1 `DNNLinearCombinedRegressor`,
`RunConfig(train_distribute=<MultiWorkerMirroredStrategy>)`) runs unchanged
under `install()`, one OS process per task on 127.0.0.1 ports, with TF2's
strategy class and with the tf.compat.v1 one 2.15's test and TF1-era
programs pass (it was refused: "does not train across tasks"). The
evaluator's metrics and the chief's last checkpoint are compared with 2.15's
own run of the same cluster (`tests/fixtures/tf215_multi_worker_evaluator.json`,
made by `make_tf215_multi_worker_evaluator_fixture.py`): at step 10,
average_loss 0.43868169, loss 8.7736340, prediction/mean 0.45367432,
label/mean 1.0, with either class.
"""

import glob
import json
import os
import pathlib

import numpy as np
import pytest
import tensorflow as tf

from tests.cluster import launcher

FIXTURE = json.loads(
    (
        pathlib.Path(__file__).resolve().parents[1]
        / "fixtures"
        / "tf215_multi_worker_evaluator.json"
    ).read_text()
)
SCRIPT = pathlib.Path(launcher.__file__).with_name("wide_deep_task.py")
TASKS = [("chief", 0), ("worker", 0), ("evaluator", 0)]


def _cluster():
    ports = launcher.free_ports(3)
    return {
        "chief": [f"127.0.0.1:{ports[0]}"],
        "worker": [f"127.0.0.1:{ports[1]}"],
        "evaluator": [f"127.0.0.1:{ports[2]}"],
    }


def _last_evaluation(eval_dir):
    steps = {}
    for path in sorted(glob.glob(os.path.join(eval_dir, "events*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    steps.setdefault(event.step, {})[value.tag] = value.simple_value
    step = max(steps)
    return {"global_step": step, **steps[step]}


@pytest.mark.parametrize("strategy", ["v2", "v1"])
def test_the_evaluator_reports_2_15s_metrics(tmp_path, strategy):
    model_dir = tmp_path / "model"
    results = launcher.run_tasks(
        tmp_path,
        {"model_dir": str(model_dir), "strategy": strategy},
        _cluster(),
        TASKS,
        script=SCRIPT,
    )
    for result in results.values():
        assert result.returncode == 0, str(result)
    expected = FIXTURE["cases"][strategy]

    returned = results["evaluator_0"].result["metrics"]
    assert sorted(returned) == sorted(expected["evaluation"])
    for key, value in expected["evaluation"].items():
        assert returned[key] == pytest.approx(value, rel=1e-6), key
    written = _last_evaluation(str(model_dir / "eval_foo"))
    assert written == pytest.approx(expected["evaluation"], rel=1e-6)
    assert results["chief_0"].result["metrics"] is None

    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(model_dir)))
    assert sorted(reader.get_variable_to_shape_map()) == sorted(expected["variables"])
    for name, value in expected["variables"].items():
        np.testing.assert_allclose(
            reader.get_tensor(name).ravel(), value, rtol=1e-5, atol=1e-6, err_msg=name
        )
    assert os.listdir(model_dir / "export" / "saved_model_exporter")
