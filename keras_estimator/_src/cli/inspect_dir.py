"""`keras-estimator inspect`: what a model_dir holds, read without building a model.

* checkpoints: the `checkpoint` state file's entries and the
  `<prefix>-<step>.index` files on disk, with their global steps (a state
  file written on another machine names absolute paths; they are looked up
  in the model_dir by their base name);
* the latest checkpoint's variables, with shapes and dtypes;
* the evaluation history of each `eval*/` directory: global step ->
  {metric: value}, from TF1 (`simple_value`) and TF2 (scalar tensor)
  summaries;
* the SavedModels under `export/` (`export/<exporter>/<timestamp>/` as the
  exporters write them, or `export/<timestamp>/`), with their signatures.

Works on model_dirs written by tf.estimator 2.15 and by this package.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, TextIO

from keras_estimator._src.cli.errors import CliError

_STEP = re.compile(r"-(\d+)$")
_STATE_FILE = "checkpoint"
_OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"
_SAVED_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt")
_MAX_EXPORT_DEPTH = 3


def _step(prefix: str) -> int | None:
    match = _STEP.search(prefix)
    return int(match.group(1)) if match else None


def _eval_dirs(model_dir: str) -> list[str]:
    return sorted(
        name
        for name in os.listdir(model_dir)
        if (name == "eval" or name.startswith("eval_"))
        and os.path.isdir(os.path.join(model_dir, name))
    )


def _local(model_dir: str, entry: str) -> str:
    """A state-file entry as a prefix inside model_dir."""
    if not os.path.isabs(entry):
        entry = os.path.join(model_dir, entry)
    if os.path.exists(entry + ".index"):
        return os.path.normpath(entry)
    return os.path.join(model_dir, os.path.basename(entry))


_STATE_LINE = re.compile(r'^\s*(\w+)\s*:\s*"((?:[^"\\]|\\.)*)"\s*$')


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _state(model_dir: str) -> tuple[str | None, list[str], str | None]:
    """(latest entry, all entries, problem) of the checkpoint state file.

    The file is a text-format `CheckpointState`; only its two path fields
    matter here (the timestamps are left out).
    """
    path = os.path.join(model_dir, _STATE_FILE)
    if not os.path.isfile(path):
        return None, [], None
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        return None, [], f"unreadable checkpoint state file: {error}"
    latest = None
    entries: list[str] = []
    for line in text.splitlines():
        match = _STATE_LINE.match(line)
        if match is None:
            continue
        field, value = match.group(1), _local(model_dir, _unquote(match.group(2)))
        if field == "model_checkpoint_path":
            latest = value
        elif field == "all_model_checkpoint_paths":
            entries.append(value)
    if latest is None and not entries and text.strip():
        return None, [], "the checkpoint state file names no checkpoint"
    if latest and latest not in entries:
        entries.append(latest)
    return latest, entries, None


def _checkpoints(model_dir: str) -> tuple[list[dict[str, Any]], str | None, list[str]]:
    """The checkpoints, the latest readable one's prefix, and problems found."""
    latest, in_state, problem = _state(model_dir)
    problems = [problem] if problem else []
    on_disk = {
        os.path.join(model_dir, name[: -len(".index")])
        for name in os.listdir(model_dir)
        if name.endswith(".index")
    }
    prefixes = set(in_state) | on_disk
    rows: list[dict[str, Any]] = []
    for prefix in prefixes:
        rows.append(
            {
                "name": os.path.relpath(prefix, model_dir),
                "step": _step(prefix),
                "in_state_file": prefix in in_state,
                "present": prefix in on_disk or os.path.exists(prefix + ".index"),
            }
        )
    rows.sort(key=lambda row: (row["step"] is None, row["step"] or 0, row["name"]))
    for row in rows:
        if row["in_state_file"] and not row["present"]:
            problems.append(
                f"{row['name']} is in the state file but its files are missing"
            )
    chosen = None
    if latest is not None and os.path.exists(latest + ".index"):
        chosen = latest
    elif rows:
        present = [row for row in rows if row["present"]]
        if present:
            chosen = os.path.join(model_dir, present[-1]["name"])
            if latest is not None:
                problems.append(
                    f"the state file's latest checkpoint is missing; "
                    f"showing {present[-1]['name']}"
                )
    for row in rows:
        row["latest"] = (
            chosen is not None and os.path.join(model_dir, row["name"]) == chosen
        )
    return rows, chosen, problems


def _variables(prefix: str) -> tuple[list[dict[str, Any]], int | None]:
    # By exact name: TensorFlow's load_checkpoint finds nothing in `run[1]`.
    from keras_estimator._src.checkpoint.checkpoints import open_reader

    with open_reader(prefix) as reader:
        shapes = reader.get_variable_to_shape_map()
        dtypes = reader.get_variable_to_dtype_map()
        rows = [
            {"name": name, "shape": list(shapes[name]), "dtype": dtypes[name].name}
            for name in sorted(shapes)
            if name != _OBJECT_GRAPH
        ]
        global_step = None
        if "global_step" in shapes and not shapes["global_step"]:
            global_step = int(reader.get_tensor("global_step"))
    return rows, global_step


def _evaluations(model_dir: str) -> dict[str, dict[int, dict[str, float]]]:
    from keras_estimator._src.checkpoint import eval_events

    history = {}
    for name in _eval_dirs(model_dir):
        by_step = eval_events.read_directory(os.path.join(model_dir, name))
        history[name] = {int(step): dict(metrics) for step, metrics in by_step.items()}
    return history


def _saved_model_class() -> Any:
    # The proto class TensorFlow registered, reached through protobuf's
    # public descriptor pool (TensorFlow has no public name for it).
    import tensorflow as tf  # noqa: F401  (registers tensorflow.SavedModel)
    from google.protobuf import descriptor_pool, message_factory

    descriptor = descriptor_pool.Default().FindMessageTypeByName(
        "tensorflow.SavedModel"
    )
    return message_factory.GetMessageClass(descriptor)


def _signatures(export_dir: str) -> dict[str, Any]:
    from google.protobuf import message, text_format

    proto = _saved_model_class()()
    binary = os.path.join(export_dir, _SAVED_MODEL_FILES[0])
    try:
        if os.path.exists(binary):
            with open(binary, "rb") as handle:
                proto.ParseFromString(handle.read())
        else:
            with open(
                os.path.join(export_dir, _SAVED_MODEL_FILES[1]), encoding="utf-8"
            ) as handle:
                text_format.Parse(handle.read(), proto)
    except (OSError, message.DecodeError, text_format.ParseError) as error:
        raise ValueError(f"unreadable SavedModel: {error}") from None
    signatures: dict[str, Any] = {}
    for meta_graph in proto.meta_graphs:
        for name, signature in sorted(meta_graph.signature_def.items()):
            if name.startswith("__"):  # __saved_model_init_op
                continue
            signatures[name] = {
                "method_name": signature.method_name,
                "inputs": sorted(signature.inputs),
                "outputs": sorted(signature.outputs),
            }
    return signatures


def _exports(model_dir: str) -> tuple[list[dict[str, Any]], list[str]]:
    base = os.path.join(model_dir, "export")
    exports: list[dict[str, Any]] = []
    problems: list[str] = []
    if not os.path.isdir(base):
        return exports, problems
    for directory, subdirs, files in os.walk(base):
        depth = os.path.relpath(directory, base).count(os.sep) + 1
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("temp-"))
        if depth >= _MAX_EXPORT_DEPTH:
            subdirs[:] = []
        if not any(name in files for name in _SAVED_MODEL_FILES):
            continue
        subdirs[:] = []  # a SavedModel's own folders (variables/, assets/)
        relative = os.path.relpath(directory, model_dir)
        try:
            signatures = _signatures(directory)
        except ValueError as error:
            problems.append(f"{relative}: {error}")
            continue
        exports.append({"path": relative, "signatures": signatures})
    exports.sort(key=lambda row: row["path"])
    return exports, problems


def inspect_model_dir(model_dir: str) -> dict[str, Any]:
    """What `model_dir` holds, as a JSON-ready dict; CliError if it is not one."""
    if not os.path.exists(model_dir):
        raise CliError(f"no such directory: {model_dir}")
    if not os.path.isdir(model_dir):
        raise CliError(f"not a directory: {model_dir}")
    has_state = os.path.isfile(os.path.join(model_dir, _STATE_FILE))
    has_index = any(name.endswith(".index") for name in os.listdir(model_dir))
    if not (has_state or has_index or _eval_dirs(model_dir)):
        raise CliError(
            f"{model_dir} is not a model_dir: no checkpoint state file, no "
            "checkpoints and no eval directories"
        )
    checkpoints, latest, problems = _checkpoints(model_dir)
    variables: list[dict[str, Any]] = []
    global_step = None
    if latest is not None:
        try:
            variables, global_step = _variables(latest)
        except Exception as error:  # noqa: BLE001  (a damaged checkpoint: say so)
            first_line = (
                str(error).strip().splitlines()[0] if str(error).strip() else ""
            )
            problems.append(
                f"cannot read {os.path.basename(latest)}: {type(error).__name__}: {first_line}"
            )
    exports, export_problems = _exports(model_dir)
    return {
        "model_dir": os.path.abspath(model_dir),
        "checkpoints": checkpoints,
        "latest_checkpoint": os.path.relpath(latest, model_dir) if latest else None,
        "global_step": global_step,
        "variables": variables,
        "evaluations": _evaluations(model_dir),
        "exports": exports,
        "problems": problems + export_problems,
    }


def _format_value(value: float) -> str:
    return f"{value:.6g}"


def format_report(report: dict[str, Any]) -> str:
    """`inspect_model_dir`'s dict as text."""
    lines = [f"model_dir: {report['model_dir']}"]
    checkpoints = report["checkpoints"]
    lines.append("")
    if checkpoints:
        lines.append(f"checkpoints ({len(checkpoints)}):")
        for row in checkpoints:
            marks = []
            if row["latest"]:
                marks.append("latest")
            if not row["in_state_file"]:
                marks.append("not in the state file")
            if not row["present"]:
                marks.append("missing")
            step = "?" if row["step"] is None else str(row["step"])
            mark = f"  ({', '.join(marks)})" if marks else ""
            lines.append(f"  step {step:>8}  {row['name']}{mark}")
    else:
        lines.append("checkpoints: none")
    variables = report["variables"]
    if report["latest_checkpoint"]:
        lines.append("")
        header = f"variables of {report['latest_checkpoint']} ({len(variables)})"
        if report["global_step"] is not None:
            header += f", global_step {report['global_step']}"
        lines.append(header + ":")
        shapes = [str(row["shape"]) for row in variables]
        name_width = max((len(row["name"]) for row in variables), default=0)
        shape_width = max((len(shape) for shape in shapes), default=0)
        for row, shape in zip(variables, shapes, strict=True):
            lines.append(
                f"  {row['name'].ljust(name_width)}  {shape.ljust(shape_width)}  {row['dtype']}"
            )
    lines.append("")
    evaluations = report["evaluations"]
    if evaluations:
        lines.append("evaluations:")
        for name, by_step in evaluations.items():
            lines.append(f"  {name}/ ({len(by_step)} evaluations)")
            for step, metrics in by_step.items():
                shown = ", ".join(
                    f"{key} {_format_value(value)}"
                    for key, value in sorted(metrics.items())
                )
                lines.append(f"    step {step:>8}  {shown}")
    else:
        lines.append("evaluations: none")
    lines.append("")
    exports = report["exports"]
    if exports:
        lines.append("exports:")
        for export in exports:
            lines.append(f"  {export['path']}")
            for name, signature in export["signatures"].items():
                lines.append(
                    f"    {name}: {signature['method_name'] or '-'}; inputs "
                    f"{', '.join(signature['inputs']) or '-'}; outputs "
                    f"{', '.join(signature['outputs']) or '-'}"
                )
    else:
        lines.append("exports: none")
    if report["problems"]:
        lines.append("")
        lines.append("problems:")
        lines.extend(f"  {problem}" for problem in report["problems"])
    return "\n".join(lines)


def main(model_dir: str, as_json: bool, out: TextIO | None = None) -> int:
    """Runs the command; 0 once the model_dir was read."""
    out = out or sys.stdout
    report = inspect_model_dir(model_dir)
    if as_json:
        json.dump(report, out, indent=2)
        out.write("\n")
    else:
        out.write(format_report(report) + "\n")
    return 0
