"""Control edges added to a graph already built.

Checked on TensorFlow 2.21.

Private symbols touched: `Operation._add_control_input`.
"""

from __future__ import annotations

from typing import Any

TOUCHES = ("tensorflow.python.framework.ops:Operation._add_control_input",)


def add_control_input(operation: Any, dependency: Any) -> None:
    """Makes `operation` run after `dependency`, in a graph already built.

    Checked on TensorFlow 2.21: `Operation._add_control_input` is what
    TensorFlow's own automatic control dependencies use to order ops on one
    resource after tracing; no public API adds an edge to an existing op.
    """
    operation._add_control_input(dependency)
