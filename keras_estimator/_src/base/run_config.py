"""`RunConfig`: how an Estimator runs, and which role this process has in a cluster.

This module owns two things:

* the user-settable run settings (checkpoint and summary cadence, random seed,
  distribution strategies, ...), validated when set, with `RunConfig.replace`
  to derive a modified copy;
* the reading of the `TF_CONFIG` environment variable at construction time into
  the cluster properties (`cluster_spec`, `task_type`, `task_id`, `master`,
  `is_chief`, `num_ps_replicas`, `num_worker_replicas`, `global_id_in_cluster`,
  ...). The parsing itself lives in `tf_config` (`_parse_tf_config`).

Each setting is one row of `_SETTINGS` (name, default, validation, property
docstring), and each cluster property one of `_CLUSTER_PROPERTIES`; storing,
`replace`, the properties' docs and repr go by them. The constructor's
signature and the property names are written out (tf.estimator's signature,
and names type checkers see); a test checks them against the tables.

Behaviour follows tf.estimator 2.15's `RunConfig`. Where 2.15 raised, the
message begins with 2.15's sentence ("save_summary_steps should be >= 0",
"Task index must be non-negative number.", "Replacing master is not
supported", ...), then names the value received and the fix. Differences:

* A cluster may have workers and no `chief`: worker 0 then acts as chief (the
  rule tf.estimator applied only when a distribution strategy was set).
* Malformed `TF_CONFIG` always raises `ValueError` saying which field is wrong
  and how to fix it (a "service" that is not an object raises, as in 2.15, a
  `TypeError`, which is also a `ValueError`); unknown task types (other than
  chief, master, worker, ps, evaluator) are rejected.
* An argument of the wrong type raises an error that is both a `TypeError` and
  a `ValueError` (tf.estimator raised `ValueError`), so code written for either
  keeps working.
* TF2's `tf.distribute.experimental.ParameterServerStrategy` is accepted as
  `train_distribute` (2.15 refused it and asked for the TF1 strategy, which
  cannot run outside TF1 graph mode and is refused here); as
  `eval_distribute` it is refused with this package's own message.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import logging
import numbers
import os
from collections.abc import Callable
from typing import Any

import tensorflow as tf
from google.protobuf import text_format

from keras_estimator._src.base.tf_config import TaskType, _ClusterInfo, _parse_tf_config

_logger = logging.getLogger("keras_estimator")

_TF_CONFIG_ENV = "TF_CONFIG"


class _DefaultSentinel:
    """Marks "argument not given" where `None` already has a meaning."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<default sentinel>"

    def __reduce__(self) -> str:
        return "_USE_DEFAULT"


_USE_DEFAULT: Any = _DefaultSentinel()

_PROTOCOLS = (None, "grpc", "grpc+verbs")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class _ArgumentTypeError(TypeError, ValueError):
    """A RunConfig argument of the wrong type.

    A `TypeError`, and also a `ValueError` because tf.estimator raised
    `ValueError` for these and callers may catch that.
    """


# --------------------------------------------------------------------------
# Validation of the settings
# --------------------------------------------------------------------------


def _check_number(
    name: str,
    value: Any,
    *,
    integer: bool,
    minimum: float,
    inclusive: bool,
    hint: str,
    type_lead: str | None = None,
) -> Any:
    """Checks a numeric setting; the messages begin as tf.estimator 2.15's did.

    `type_lead` is 2.15's sentence for a value of the wrong type, where it had
    one ("tf_random_seed must be integer."); a value out of range gets 2.15's
    "<name> should be >= 0" / "should be > 0".
    """
    if value is None:
        return None
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        noun = "an integer" if integer else "a number"
        received = f"{value!r} of type {type(value).__name__}. {hint}"
        if type_lead is not None:
            raise _ArgumentTypeError(f"{type_lead} Got {received}")
        raise _ArgumentTypeError(f"{name} must be {noun} or None, got {received}")
    if value != value:  # NaN passes every comparison below.
        raise ValueError(f"{name} must be a number, got {value!r}. {hint}")
    if value < minimum or (not inclusive and value == minimum):
        bound = f">= {minimum}" if inclusive else f"> {minimum}"
        raise ValueError(f"{name} should be {bound}, got {value!r}. {hint}")
    if (
        isinstance(value, numbers.Integral)
        and not _INT64_MIN <= int(value) <= _INT64_MAX
    ):
        # Steps and seeds become int64 tensors; a larger value would fail there.
        raise ValueError(f"{name} must fit in a 64-bit integer, got {value!r}. {hint}")
    return value


def _number_checker(
    integer: bool,
    minimum: float,
    inclusive: bool,
    hint: str,
    type_lead: str | None = None,
):
    def check(name: str, value: Any) -> Any:
        return _check_number(
            name,
            value,
            integer=integer,
            minimum=minimum,
            inclusive=inclusive,
            hint=hint,
            type_lead=type_lead,
        )

    return check


def _check_model_dir(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bytes):
        value = os.fsdecode(value)  # As the OS would read the path.
    if not isinstance(value, str):
        raise _ArgumentTypeError(
            f"{name} must be a path (str or os.PathLike) or None, got {value!r} of "
            f"type {type(value).__name__}."
        )
    if not value:
        raise ValueError(
            f"{name} should be non-empty: got ''. Pass a directory, or None "
            "to let the Estimator choose one."
        )
    if "\x00" in value:
        raise ValueError(
            f"{name} must not contain a NUL character, got {value!r}. Pass the "
            "directory path without it."
        )
    return value


def _check_session_config(name: str, value: Any) -> Any:
    if value is not None and not isinstance(value, tf.compat.v1.ConfigProto):
        raise _ArgumentTypeError(
            f"{name} must be instance of ConfigProto (tf.compat.v1.ConfigProto) or "
            f"None, got {value!r} of type {type(value).__name__}."
        )
    return value


def _check_strategy(name: str, value: Any) -> Any:
    if value is None:
        return None
    strategy_types = (tf.distribute.Strategy, tf.compat.v1.distribute.Strategy)
    if not isinstance(value, strategy_types):
        raise _ArgumentTypeError(
            f"{name} must be a tf.distribute.Strategy or None, got {value!r} of "
            f"type {type(value).__name__}."
        )
    if isinstance(value, tf.compat.v1.distribute.experimental.ParameterServerStrategy):
        # TensorFlow raises NotImplementedError for its scope() and run()
        # outside TF1 graph mode, so it cannot run here.
        raise ValueError(
            f"{name} is tf.compat.v1.distribute.experimental.ParameterServerStrategy, "
            "which only runs in TF1 graph mode. Use the TF2 "
            "tf.distribute.experimental.ParameterServerStrategy(cluster_resolver) "
            "as train_distribute on the chief; ps and worker tasks serve it."
        )
    if (
        isinstance(value, tf.distribute.experimental.ParameterServerStrategy)
        and name == "eval_distribute"
    ):
        raise ValueError(
            f"{name} is a ParameterServerStrategy; evaluation under parameter "
            "servers runs on the chief without scheduling. Pass the strategy as "
            "train_distribute and leave eval_distribute None."
        )
    return value


def _check_experimental_distribute(name: str, value: Any) -> Any:
    if value is None:
        return None
    if not (hasattr(value, "train_distribute") or hasattr(value, "eval_distribute")):
        raise _ArgumentTypeError(
            f"{name} must be None or a DistributeConfig-like object with "
            f"`train_distribute` / `eval_distribute` attributes, got {value!r}."
        )
    return value


def _check_device_fn(name: str, value: Any) -> Any:
    if value is None:
        return None
    try:
        parameters = inspect.signature(value).parameters.values()
    except (TypeError, ValueError):
        parameters = None
    named = {
        p.name
        for p in parameters or ()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }
    if not callable(value) or named != {"op"}:
        raise _ArgumentTypeError(
            f'{name} must be callable with exactly one argument "op". Got '
            f"{value!r}. Define it as `def device_fn(op): return '/cpu:0'`."
        )
    return value


def _check_protocol(name: str, value: Any) -> Any:
    # Only None and strings are compared: `in` on an array would compare
    # element-wise and fail with an unrelated message.
    if not (value is None or isinstance(value, str)) or value not in _PROTOCOLS:
        raise ValueError(f"{name} must be None, 'grpc' or 'grpc+verbs', got {value!r}.")
    return value


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _ArgumentTypeError(
            f"{name} must be True or False, got {value!r} of type "
            f"{type(value).__name__}."
        )
    return value


# --------------------------------------------------------------------------
# The fields
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Setting:
    """One run setting: a constructor argument, a property, replaceable.

    The constructor's signature spells the settings out too, as tf.estimator
    2.15's does; tests check it against this table.
    """

    name: str
    default: Any
    check: Callable[[str, Any], Any]  # (name, value) -> the value to store
    # The property's docstring; None where there is no property (and so no
    # entry in repr), as tf.estimator 2.15 had none for experimental_distribute.
    doc: str | None


_STEPS_HINT = "Pass a non-negative int, or None to disable."

# The settings, in constructor order (steps_per_loop, an extension, is the
# keyword-only last one).
_SETTINGS = (
    _Setting(
        "model_dir",
        None,
        _check_model_dir,
        "Directory for checkpoints and summaries, or None.",
    ),
    _Setting(
        "tf_random_seed",
        None,
        _number_checker(
            True,
            float("-inf"),
            True,
            "Pass an int seed.",
            type_lead="tf_random_seed must be integer.",
        ),
        "Graph-level random seed, or None.",
    ),
    _Setting(
        "save_summary_steps",
        100,
        _number_checker(True, 0, True, _STEPS_HINT),
        "Steps between summaries.",
    ),
    _Setting(
        "save_checkpoints_steps",
        _USE_DEFAULT,
        _number_checker(True, 0, True, _STEPS_HINT),
        "Steps between checkpoints, or None.",
    ),
    _Setting(
        "save_checkpoints_secs",
        _USE_DEFAULT,
        _number_checker(
            False, 0, True, "Pass a non-negative number of seconds, or None."
        ),
        "Seconds between checkpoints, or None.",
    ),
    _Setting(
        "session_config",
        None,
        _check_session_config,
        "The tf.compat.v1.ConfigProto; in a cluster defaults to device filters.",
    ),
    _Setting(
        "keep_checkpoint_max",
        5,
        _number_checker(
            True, 0, True, "Pass a non-negative int; 0 or None keeps every checkpoint."
        ),
        "How many recent checkpoints are kept.",
    ),
    _Setting(
        "keep_checkpoint_every_n_hours",
        10000,
        _number_checker(False, 0, False, "Pass a positive number of hours."),
        "Hours between permanently kept checkpoints.",
    ),
    _Setting(
        "log_step_count_steps",
        100,
        _number_checker(
            True, 0, False, "Pass a positive int, or None to disable step logging."
        ),
        "Steps between loss and steps/second logs.",
    ),
    _Setting(
        "train_distribute",
        None,
        _check_strategy,
        "Optional tf.distribute.Strategy for training.",
    ),
    _Setting(
        "device_fn",
        None,
        _check_device_fn,
        "Callable op -> device string overriding placement, or None.",
    ),
    _Setting(
        "protocol",
        None,
        _check_protocol,
        "Server protocol: None, 'grpc' or 'grpc+verbs'.",
    ),
    _Setting(
        "eval_distribute",
        None,
        _check_strategy,
        "Optional tf.distribute.Strategy for evaluation.",
    ),
    _Setting(
        "experimental_distribute",
        None,
        _check_experimental_distribute,
        None,  # Its strategies are train_distribute and eval_distribute.
    ),
    _Setting(
        "experimental_max_worker_delay_secs",
        None,
        _number_checker(
            True,
            float("-inf"),
            True,
            "Pass an int number of seconds, or None.",
            type_lead="experimental_max_worker_delay_secs must be an integer if set.",
        ),
        "Max staggered worker start delay.",
    ),
    _Setting(
        "session_creation_timeout_secs",
        7200,
        _number_checker(False, 0, False, "Pass a positive number of seconds."),
        "Seconds workers wait for a session.",
    ),
    _Setting(
        "checkpoint_save_graph_def",
        True,
        _check_bool,
        "Whether the graph is written with checkpoints.",
    ),
    _Setting(
        "steps_per_loop",
        None,
        _number_checker(
            True, 1, True, "Pass a positive int, or None to let hooks decide."
        ),
        "Steps per compiled call (hooks run between), or None.",
    ),
)
_SETTING = {setting.name: setting for setting in _SETTINGS}

# What `replace` may change: every setting, in constructor order.
_REPLACEABLE = tuple(_SETTING)

# The cluster properties, read from TF_CONFIG (fields of `_ClusterInfo`):
# name -> the property's docstring.
_CLUSTER_PROPERTIES = {
    "cluster_spec": "tf.train.ClusterSpec from TF_CONFIG (empty when local).",
    "task_type": "This task's job name, e.g. 'worker'.",
    "task_id": "This task's index within its job.",
    "master": "Session target: '' locally, 'grpc://host:port' in a cluster.",
    "evaluation_master": "Session target for evaluation ('' by default).",
    "is_chief": "Whether this task is the chief.",
    "num_ps_replicas": "Number of parameter servers.",
    "num_worker_replicas": "Number of workers, the chief included.",
    "global_id_in_cluster": (
        "Unique index of this task: chief 0, then workers, then ps; "
        "None for an evaluator."
    ),
    "service": "The TF_CONFIG 'service' object, or None.",
}


def _both_checkpoint_cadences_error(steps: Any, secs: Any) -> ValueError:
    return ValueError(
        "`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set. "
        f"Got save_checkpoints_steps={steps!r} and save_checkpoints_secs={secs!r}. "
        "Set one of them and leave the other unset (or None)."
    )


def _resolve_checkpoint_cadence(steps: Any, secs: Any) -> tuple[Any, Any]:
    """Applies the constructor defaults: 600 seconds when neither is given."""
    if steps is _USE_DEFAULT and secs is _USE_DEFAULT:
        return None, 600
    if secs is _USE_DEFAULT:
        return steps, None
    if steps is _USE_DEFAULT:
        return None, secs
    if steps is not None and secs is not None:
        raise _both_checkpoint_cadences_error(steps, secs)
    return steps, secs


def _resolve_model_dir(model_dir: Any, tf_config_model_dir: str | None) -> str | None:
    model_dir = _check_model_dir("model_dir", model_dir)
    if tf_config_model_dir and model_dir and model_dir != tf_config_model_dir:
        raise ValueError(
            "`model_dir` provided in RunConfig construct, if set, must have the "
            "same value as the model_dir in TF_CONFIG. "
            f"model_dir {model_dir!r} differs from the model_dir "
            f"{tf_config_model_dir!r} in TF_CONFIG. Pass the same directory, or "
            "leave model_dir=None to use the one from TF_CONFIG."
        )
    return model_dir or tf_config_model_dir


def _default_distributed_session_config(
    task_type: str, task_id: int
) -> tf.compat.v1.ConfigProto | None:
    """Device filters so that each task talks only to the ps and itself."""
    filters = {
        TaskType.MASTER: ["/job:ps", "/job:master"],
        TaskType.CHIEF: ["/job:ps", "/job:chief"],
        TaskType.WORKER: ["/job:ps", f"/job:worker/task:{task_id}"],
        TaskType.PS: ["/job:ps", "/job:worker", "/job:chief", "/job:master"],
    }.get(task_type)
    if filters is None:
        return None
    rewrite = tf.compat.v1.GraphOptions().rewrite_options
    rewrite.meta_optimizer_iterations = type(rewrite).ONE
    return tf.compat.v1.ConfigProto(
        allow_soft_placement=True,
        graph_options=tf.compat.v1.GraphOptions(rewrite_options=rewrite),
        device_filters=filters,
    )


def _from_distribute_config(name: str, strategy: Any, distribute_config: Any) -> Any:
    """Takes the strategy from `experimental_distribute` when it holds one."""
    from_config = getattr(distribute_config, name, None)
    if from_config is None:
        return strategy
    if strategy is not None:
        raise ValueError(
            f"{name} is given both as an argument and in experimental_distribute "
            f"(got {strategy!r} and {from_config!r}). Pass it in one place only."
        )
    return from_config


def _refuse_remote_cluster(
    distribute_config: Any, train_distribute: Any, info: _ClusterInfo
) -> None:
    """Refuses `experimental_distribute.remote_cluster` where 2.15 acted on it.

    With a `train_distribute`, 2.15 took `remote_cluster` as the config's
    `cluster_spec` and ran `train()` as a standalone client driving that
    cluster's tasks (TensorFlow's distribute coordinator, gone from TF2);
    without one it ignored it, and so does this class.
    """
    remote = getattr(distribute_config, "remote_cluster", None)
    if not remote or train_distribute is None:
        return
    prefix = ""
    if info.cluster_spec.jobs:
        prefix = (
            'Cannot set both "cluster_spec" of TF_CONFIG and '
            "`experimental_distribute.remote_cluster`. "
        )
    raise ValueError(
        f"{prefix}experimental_distribute.remote_cluster={remote!r} is not "
        "supported: tf.estimator 2.15 trained from this process as a standalone "
        "client driving that cluster's tasks, which TF2 no longer provides. Run "
        "the Estimator program in each task instead, with TF_CONFIG naming the "
        "cluster (docs/clusters.md), or leave remote_cluster unset to train here."
    )


def _read_only(name: str) -> property:
    """The property `name`, documented by its row in the tables above."""
    doc = _SETTING[name].doc if name in _SETTING else _CLUSTER_PROPERTIES[name]
    if doc is None:
        raise ValueError(f"RunConfig has no property {name!r}.")
    attribute = "_" + name
    return property(lambda self: getattr(self, attribute), doc=doc)


def _format_value(value: Any) -> str:
    if isinstance(value, tf.compat.v1.ConfigProto):
        return f"ConfigProto<{text_format.MessageToString(value, as_one_line=True)}>"
    if isinstance(value, tf.train.ClusterSpec):
        return f"ClusterSpec({value.as_dict()!r})"
    return repr(value)


class RunConfig:
    """Settings for an `Estimator` run, and this process's place in a cluster.

    The run settings are the constructor arguments. The cluster properties
    (`cluster_spec`, `task_type`, `task_id`, `master`, `evaluation_master`,
    `is_chief`, `num_ps_replicas`, `num_worker_replicas`,
    `global_id_in_cluster`, `service`) are read from the `TF_CONFIG`
    environment variable when the object is built: a JSON object with a
    `cluster` (task type -> list of "host:port") and a `task`
    (`{"type": ..., "index": ...}`). Without `TF_CONFIG` the process is a
    single local worker and chief.

    Args:
        model_dir: Directory for checkpoints and summaries (str or PathLike).
            `None` lets the Estimator choose; `TF_CONFIG["model_dir"]` is used
            when set and must agree with this argument.
        tf_random_seed: Integer seed for TensorFlow's random operations.
        save_summary_steps: Write summaries every this many steps.
        save_checkpoints_steps: Save a checkpoint every this many steps.
            Cannot be combined with `save_checkpoints_secs`.
        save_checkpoints_secs: Save a checkpoint every this many seconds.
            Defaults to 600 when neither cadence is given; if both are `None`,
            checkpoints are not saved periodically.
        session_config: A `tf.compat.v1.ConfigProto`, or `None`.
        keep_checkpoint_max: How many recent checkpoints to keep (0 or `None`:
            all).
        keep_checkpoint_every_n_hours: Additionally keep one checkpoint per
            this many hours (the default 10000 effectively disables it).
        log_step_count_steps: Log the loss and steps/second every this many
            steps.
        train_distribute: A `tf.distribute.Strategy` for training, or `None`.
        device_fn: A callable `device_fn(op)` returning a device string.
        protocol: `None`, `'grpc'` or `'grpc+verbs'`.
        eval_distribute: A `tf.distribute.Strategy` for evaluation, or `None`.
        experimental_distribute: An object with `train_distribute` and
            `eval_distribute` attributes, an alternative to passing those two
            arguments (not both). Its `remote_cluster` is refused when there
            is a `train_distribute` (see `_refuse_remote_cluster`) and
            ignored otherwise, as 2.15 ignored it.
        experimental_max_worker_delay_secs: Integer upper bound of the
            staggered start delay of workers.
        session_creation_timeout_secs: How long workers wait for the session.
        checkpoint_save_graph_def: Whether to write the graph with checkpoints.
        steps_per_loop: An extension standing in for TPUEstimator's
            `iterations_per_loop`: every compiled call of training and
            evaluation runs exactly this many steps (fewer only to stop at
            `steps`/`max_steps`, at a `StopAtStepHook`'s step, or at the end
            of the input), and hooks and
            callbacks run between calls, seeing the loop's last step. `None`
            (the default) fuses as many steps as the hooks allow.

    Raises:
        ValueError: if both checkpoint cadences are set, a value is out of
            range, `TF_CONFIG` is malformed, or `experimental_distribute`
            names a `remote_cluster` to train on.
        TypeError: if an argument has the wrong type (also a `ValueError`).

    Example:
        ```python
        config = RunConfig(model_dir="/tmp/model", save_checkpoints_steps=500)
        config = config.replace(keep_checkpoint_max=10)
        ```
    """

    # Set through setattr from the validated settings; declared for type checkers.
    _session_config: Any
    _service: Any
    _save_checkpoints_steps: Any
    _save_checkpoints_secs: Any

    def __init__(
        self,
        model_dir=None,
        tf_random_seed=None,
        save_summary_steps=100,
        save_checkpoints_steps=_USE_DEFAULT,
        save_checkpoints_secs=_USE_DEFAULT,
        session_config=None,
        keep_checkpoint_max=5,
        keep_checkpoint_every_n_hours=10000,
        log_step_count_steps=100,
        train_distribute=None,
        device_fn=None,
        protocol=None,
        eval_distribute=None,
        experimental_distribute=None,
        experimental_max_worker_delay_secs=None,
        session_creation_timeout_secs=7200,
        checkpoint_save_graph_def=True,
        *,
        steps_per_loop=None,
    ):
        # The arguments by name; first, before any other local is bound.
        values = dict(locals())
        steps, secs = _resolve_checkpoint_cadence(
            save_checkpoints_steps, save_checkpoints_secs
        )
        experimental_distribute = _check_experimental_distribute(
            "experimental_distribute", experimental_distribute
        )
        train_distribute = _from_distribute_config(
            "train_distribute", train_distribute, experimental_distribute
        )
        eval_distribute = _from_distribute_config(
            "eval_distribute", eval_distribute, experimental_distribute
        )
        info = _parse_tf_config(
            os.environ.get(_TF_CONFIG_ENV), trains_under_strategy=train_distribute is not None
        )
        _refuse_remote_cluster(experimental_distribute, train_distribute, info)
        if os.environ.get(_TF_CONFIG_ENV):
            _logger.info("TF_CONFIG: task %s:%d", info.task_type, info.task_id)
        values.update(
            model_dir=_resolve_model_dir(model_dir, info.model_dir),
            save_checkpoints_steps=steps,
            save_checkpoints_secs=secs,
            train_distribute=train_distribute,
            eval_distribute=eval_distribute,
            experimental_distribute=experimental_distribute,
        )
        for setting in _SETTINGS:
            value = setting.check(setting.name, values[setting.name])
            setattr(self, "_" + setting.name, value)
        self._set_cluster_info(info)

    def _set_cluster_info(self, info: _ClusterInfo) -> None:
        for name in _CLUSTER_PROPERTIES:
            setattr(self, "_" + name, getattr(info, name))
        self._environment = info.environment
        self._rpc_layer = info.rpc_layer
        self._names_task = info.names_task
        if self._session_config is None and info.cluster_spec.jobs:
            # As tf.estimator: between-graph tasks see only the ps and themselves.
            self._session_config = _default_distributed_session_config(
                info.task_type, info.task_id
            )

    def replace(self, **kwargs) -> RunConfig:
        """Returns a copy of this config with some run settings changed.

        Only the constructor's settings can be replaced (not the cluster
        properties read from `TF_CONFIG`). Replacing one checkpoint cadence with
        a value clears the other one.

        Args:
            **kwargs: New values, keyed by property name.

        Returns:
            A new `RunConfig`; this one is unchanged.

        Raises:
            ValueError: if a name cannot be replaced, both checkpoint cadences
                are set, or a value is invalid.
        """
        unknown = sorted(set(kwargs) - set(_REPLACEABLE))
        if unknown:
            raise ValueError(
                f"Replacing {', '.join(unknown)} is not supported. "
                f"RunConfig.replace() can replace: {', '.join(_REPLACEABLE)}."
            )
        new = copy.copy(self)
        new._service = copy.deepcopy(self._service)
        if self._session_config is not None:
            new._session_config = copy.deepcopy(self._session_config)
        for name, value in kwargs.items():
            setattr(new, "_" + name, _SETTING[name].check(name, value))
        steps, secs = new._save_checkpoints_steps, new._save_checkpoints_secs
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" in kwargs:
            if steps is not None and secs is not None:
                raise _both_checkpoint_cadences_error(steps, secs)
        elif "save_checkpoints_steps" in kwargs and steps is not None:
            new._save_checkpoints_secs = None
        elif "save_checkpoints_secs" in kwargs and secs is not None:
            new._save_checkpoints_steps = None
        return new

    def _fields(self) -> list[tuple[str, Any]]:
        names = [setting.name for setting in _SETTINGS if setting.doc is not None]
        names += list(_CLUSTER_PROPERTIES)
        return [(name, getattr(self, "_" + name)) for name in names]

    def __repr__(self) -> str:
        body = ", ".join(f"{name}={_format_value(v)}" for name, v in self._fields())
        return f"RunConfig({body})"

    def __str__(self) -> str:
        body = "".join(f"  {name}={_format_value(v)},\n" for name, v in self._fields())
        return f"RunConfig(\n{body})"

    # One property per setting (but experimental_distribute) and per cluster
    # field, in the tables' order; written out so that type checkers see them.
    model_dir = _read_only("model_dir")
    tf_random_seed = _read_only("tf_random_seed")
    save_summary_steps = _read_only("save_summary_steps")
    save_checkpoints_steps = _read_only("save_checkpoints_steps")
    save_checkpoints_secs = _read_only("save_checkpoints_secs")
    session_config = _read_only("session_config")
    keep_checkpoint_max = _read_only("keep_checkpoint_max")
    keep_checkpoint_every_n_hours = _read_only("keep_checkpoint_every_n_hours")
    log_step_count_steps = _read_only("log_step_count_steps")
    train_distribute = _read_only("train_distribute")
    device_fn = _read_only("device_fn")
    protocol = _read_only("protocol")
    eval_distribute = _read_only("eval_distribute")
    experimental_max_worker_delay_secs = _read_only(
        "experimental_max_worker_delay_secs"
    )
    session_creation_timeout_secs = _read_only("session_creation_timeout_secs")
    checkpoint_save_graph_def = _read_only("checkpoint_save_graph_def")
    steps_per_loop = _read_only("steps_per_loop")
    cluster_spec = _read_only("cluster_spec")
    task_type = _read_only("task_type")
    task_id = _read_only("task_id")
    master = _read_only("master")
    evaluation_master = _read_only("evaluation_master")
    is_chief = _read_only("is_chief")
    num_ps_replicas = _read_only("num_ps_replicas")
    num_worker_replicas = _read_only("num_worker_replicas")
    global_id_in_cluster = _read_only("global_id_in_cluster")
    service = _read_only("service")


def names_task(config: RunConfig) -> bool:
    """Whether `config`'s TF_CONFIG named this process's task.

    False for a cluster without a "task", which a RunConfig with a
    `train_distribute` takes (see `tf_config._parse_tf_config`).
    """
    return config._names_task
