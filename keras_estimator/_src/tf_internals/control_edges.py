"""Control edges added to a graph already built.

Checked on TensorFlow 2.21.

Private symbols touched: `Operation._add_control_input`, `_add_control_inputs`
and `_remove_all_control_inputs`.
"""

from __future__ import annotations

from typing import Any

TOUCHES = (
    "tensorflow.python.framework.ops:Operation._add_control_input",
    "tensorflow.python.framework.ops:Operation._add_control_inputs",
    "tensorflow.python.framework.ops:Operation._remove_all_control_inputs",
)


def add_control_input(operation: Any, dependency: Any) -> None:
    """Makes `operation` run after `dependency`, in a graph already built.

    Checked on TensorFlow 2.21: `Operation._add_control_input` is what
    TensorFlow's own automatic control dependencies use to order ops on one
    resource after tracing; no public API adds an edge to an existing op.
    """
    operation._add_control_input(dependency)


def replace_control_inputs(operation: Any, dependencies: list[Any]) -> None:
    """Makes `operation` wait for exactly `dependencies`, in a graph already built.

    Checked on TensorFlow 2.21: `Operation._remove_all_control_inputs` and
    `_add_control_inputs` are the pair TensorFlow's own graph rewrites use.
    """
    operation._remove_all_control_inputs()
    if dependencies:
        operation._add_control_inputs(dependencies)
