"""ProfilerHook writes traces TensorBoard's profile plugin reads."""

import json
import logging
import re

import pytest

import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn

X, Y = make_data()


@pytest.mark.parametrize(
    ("save_steps", "steps", "expected"),
    # tf.estimator 2.15 (ProfilerHook in training_hooks, from step 0) wrote
    # timeline-4.json for save_steps=4 over 6 steps and timeline-3/6/9.json
    # for save_steps=3 over 10: never the first run, then every save_steps.
    [(4, 6, [4]), (3, 10, [3, 6, 9])],
)
@pytest.mark.parametrize("entry", ["estimator", "fit"])
def test_profiles_2_15s_steps_as_timeline_json(tmp_path, caplog, save_steps, steps, expected, entry):
    est = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path / "model"), params={})
    traces = tmp_path / "profile"
    hook = ke.ProfilerHook(save_steps=save_steps, output_dir=str(traces))
    with caplog.at_level(logging.INFO, logger="keras_estimator"):
        if entry == "estimator":
            est.train(input_fn(X, Y), steps=steps, hooks=[hook])
        else:  # Model.fit through HookCallback profiles the same steps
            model = ke.model_fn_to_keras(mlp_model_fn, str(tmp_path / "model"), params={})
            model.fit(input_fn(X, Y)(), steps_per_epoch=steps, callbacks=[ke.HookCallback([hook])])
    traced = re.findall(r"Saved a profile of step (\d+)", caplog.text)
    assert traced == [str(step) for step in expected]
    timelines = sorted(traces.glob("timeline-*.json"), key=lambda p: int(p.stem.split("-")[1]))
    assert [p.name for p in timelines] == [f"timeline-{step}.json" for step in expected]
    for timeline in timelines:
        # A Chrome trace, as 2.15's: process names, then complete events.
        trace = json.loads(timeline.read_text())
        kinds = {event["ph"] for event in trace["traceEvents"]}
        assert {"M", "X"} <= kinds
        assert all(e["dur"] >= 0 for e in trace["traceEvents"] if e["ph"] == "X")
    # Each profile has its own run directory for TensorBoard's profile tab.
    runs = sorted(p.name for p in (traces / "plugins" / "profile").iterdir())
    assert runs == sorted(f"step_{step}" for step in expected)
    assert all(list((traces / "plugins" / "profile" / run).glob("*.xplane.pb")) for run in runs)
    assert est.get_variable_value("global_step") == steps


def _timeline(directory):
    [path] = directory.glob("timeline-*.json")
    return json.loads(path.read_text())["traceEvents"]


def test_timelines_hold_tf2_host_events_whatever_show_dataflow_and_show_memory(tmp_path, caplog):
    """What a timeline holds, pinned (docs/hooks.md, ProfilerHook's docstring).

    tf.estimator 2.15 (a 4-weight linear model_fn, save_steps=2) wrote per op
    of the step one "X" event with args {name, op} under the process
    "/job:localhost/replica:0/task:0/device:CPU:0 Compute" (45 of them), and
    show_dataflow=True added 14-16 flow events each of "s" and "t",
    show_memory=True 84 "C", 42 each of "N", "O", "D". TF2's profiler gives
    host events only: metadata and complete events, the flags change nothing.
    """
    est = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path / "model"), params={})
    runs = {}
    for flags in [(True, True), (False, False)]:
        out = tmp_path / f"profile_{flags[0]}_{flags[1]}"
        with caplog.at_level(logging.WARNING, logger="keras_estimator"):
            caplog.clear()
            hook = ke.ProfilerHook(save_steps=2, output_dir=str(out), show_dataflow=flags[0], show_memory=flags[1])
            est.train(input_fn(X, Y), steps=2, hooks=[hook])
        assert ("hold no memory tracks" in caplog.text) == flags[1]
        runs[flags] = _timeline(out)
    for events in runs.values():
        assert {event["ph"] for event in events} == {"M", "X"}
        processes = {e["args"]["name"] for e in events if e["name"] == "process_name"}
        assert "/host:CPU" in processes
        assert not any("Compute" in name or name == "Allocators" for name in processes)
        names = {e["name"] for e in events if e["ph"] == "X"}
        assert any(name.startswith("EagerLocalExecute") for name in names)
        assert all("args" not in e for e in events if e["ph"] == "X")
    kinds = [{(e["ph"], e["name"] if e["ph"] == "M" else "") for e in events} for events in runs.values()]
    assert kinds[0] == kinds[1]


def test_needs_exactly_one_schedule():
    import pytest

    with pytest.raises(ValueError, match="every_secs or every_steps"):
        ke.ProfilerHook(output_dir="x")
