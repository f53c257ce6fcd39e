"""`tf.compat.v1.estimator.tpu`'s configuration: TPUConfig, RunConfig, InputPipelineConfig.

The values and checks are 2.15's, so a program's config builds unchanged.
What they mean here: `TPUEstimator` runs on a `tf.distribute.TPUStrategy`
when `use_tpu=True`, with `iterations_per_loop` (a step count) as
`RunConfig.steps_per_loop`, and on the Estimator's usual devices otherwise.
The input-pipeline layout settings (`per_host_input_for_training`,
`input_partition_dims`, ...) are checked and kept for reading but do not
change how input is fed: the strategy distributes the dataset.
"""

from __future__ import annotations

import collections
import json
import os
import re
from typing import Any, NamedTuple

import numpy as np

from keras_estimator._src.base.run_config import RunConfig as _BaseRunConfig


class InputPipelineConfig:
    """How 2.15 fed input to TPU hosts; kept as its constants."""

    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


_CORES_PER_REPLICA = (1, 2, 4, 8, 16, 32, 64, 128)
_ITERATIONS = re.compile(r"^(?P<value>[1-9]\d*)(?P<unit>[smh])?$")


class IterationsPerLoop(NamedTuple):
    """`iterations_per_loop` parsed: a step count, or seconds."""

    value: int
    unit: str  # "count" or "seconds"


def parse_iterations_per_loop(iterations_per_loop: Any) -> IterationsPerLoop:
    """Reads `N` (steps) or `N<s|m|h>` (a time), as 2.15 accepted them."""
    match = _ITERATIONS.match(str(iterations_per_loop))
    if match is None or isinstance(iterations_per_loop, bool):
        raise ValueError(
            "Invalid TPUConfig `iterations_per_loop` value. Value must be positive "
            "integer value or time-based value `<N><s|m|h>` (steps, or a time "
            f"such as '60s', '10m' or '1h'); got {iterations_per_loop!r}."
        )
    value = int(match.group("value"))
    unit = match.group("unit")
    if unit is None:
        return IterationsPerLoop(value, "count")
    return IterationsPerLoop(value * {"s": 1, "m": 60, "h": 3600}[unit], "seconds")


def check_positive_integer(name: str, value: Any) -> None:
    """2.15's check: an int (numpy's too) or a TypeError; above 0 or a ValueError."""
    if not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{name} must be int, got {type(value)} ({value!r}): pass a positive "
            "integer."
        )
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value!r}.")


class TPUConfig(
    collections.namedtuple(
        "TPUConfig",
        [
            "iterations_per_loop",
            "num_shards",
            "num_cores_per_replica",
            "per_host_input_for_training",
            "tpu_job_name",
            "initial_infeed_sleep_secs",
            "input_partition_dims",
            "eval_training_input_configuration",
            "experimental_host_call_every_n_steps",
            "experimental_allow_per_host_v2_parallel_get_next",
            "experimental_feed_hook",
        ],
    )
):
    """TPU settings of a `tpu.RunConfig`, checked as 2.15 checked them.

    `iterations_per_loop` (default 2) is what a TPU run uses as
    `steps_per_loop`; the other fields are kept as given.
    """

    def __new__(
        cls,
        iterations_per_loop: Any = 2,
        num_shards: int | None = None,
        num_cores_per_replica: int | None = None,
        per_host_input_for_training: Any = True,
        tpu_job_name: str | None = None,
        initial_infeed_sleep_secs: int | None = None,
        input_partition_dims: Any = None,
        eval_training_input_configuration: int = InputPipelineConfig.PER_HOST_V1,
        experimental_host_call_every_n_steps: int = 1,
        experimental_allow_per_host_v2_parallel_get_next: bool = False,
        experimental_feed_hook: Any = None,
    ) -> TPUConfig:
        parse_iterations_per_loop(iterations_per_loop)
        if num_shards is not None:
            check_positive_integer("TPUConfig num_shards", num_shards)
        if input_partition_dims is not None:
            _check_partition_dims(
                input_partition_dims, per_host_input_for_training, num_cores_per_replica
            )
        if num_cores_per_replica is not None and (
            num_cores_per_replica not in _CORES_PER_REPLICA
        ):
            raise ValueError(
                "num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; "
                f"got {num_cores_per_replica!r}."
            )
        if eval_training_input_configuration not in (
            InputPipelineConfig.PER_HOST_V1,
            InputPipelineConfig.SLICED,
        ):
            raise ValueError(
                "eval_training_input_configuration must be PER_HOST_V1 or SLICED; "
                f"got {eval_training_input_configuration!r} (use "
                "InputPipelineConfig.PER_HOST_V1 or InputPipelineConfig.SLICED)."
            )
        if per_host_input_for_training is False:
            per_host_input_for_training = InputPipelineConfig.PER_SHARD_V1
        elif per_host_input_for_training is True:
            per_host_input_for_training = InputPipelineConfig.PER_HOST_V1
        if initial_infeed_sleep_secs:
            check_positive_integer(
                "TPUConfig initial_infeed_sleep_secs", initial_infeed_sleep_secs
            )
        return super().__new__(
            cls,
            iterations_per_loop,
            num_shards,
            num_cores_per_replica,
            per_host_input_for_training,
            tpu_job_name or _tpu_job_name_from_tf_config(),
            initial_infeed_sleep_secs,
            input_partition_dims,
            eval_training_input_configuration,
            experimental_host_call_every_n_steps,
            experimental_allow_per_host_v2_parallel_get_next,
            experimental_feed_hook,
        )


def _check_partition_dims(dims: Any, per_host: Any, cores_per_replica: Any) -> None:
    if len(dims) not in (1, 2):
        raise ValueError(
            "input_partition_dims must be a list/tuple with one or two elements; "
            f"got {dims!r}."
        )
    if per_host is not InputPipelineConfig.PER_HOST_V2:
        raise ValueError(
            "input_partition_dims is only supported in PER_HOST_V2 mode: pass "
            "per_host_input_for_training=InputPipelineConfig.PER_HOST_V2; got "
            f"{per_host!r}."
        )
    if cores_per_replica is None:
        raise ValueError("input_partition_dims requires setting num_cores_per_replica.")


def _tpu_job_name_from_tf_config() -> str | None:
    service = json.loads(os.environ.get("TF_CONFIG") or "{}").get("service", {})
    return service.get("tpu_worker_job_name")


class RunConfig(_BaseRunConfig):
    """A RunConfig with a `tpu_config`, the TPU's `master` and its `cluster`.

    Args:
        tpu_config: A `TPUConfig`; default `TPUConfig()` (also for any value
            that is false). As in 2.15 any object is kept as given: a
            `TPUEstimator` reads the TPUConfig fields it needs from it.
        evaluation_master: The address evaluation connects to; default
            `master`.
        master: The TPU's address (e.g. `grpc://10.0.0.2:8470`); not with
            `cluster`.
        cluster: A `tf.distribute.cluster_resolver.TPUClusterResolver`.
        **kwargs: The settings of `keras_estimator.RunConfig`.

    Raises:
        ValueError: both `master` and `cluster` are given.
    """

    def __init__(
        self,
        tpu_config: Any = None,
        evaluation_master: str | None = None,
        master: str | None = None,
        cluster: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if kwargs.get("session_config") is None:
            # As 2.15: TPU runs are in-graph, so a TF_CONFIG cluster gives no
            # default session_config (no device filters) as other tasks get.
            self._session_config = None
        if master is not None and cluster is not None:
            raise ValueError(
                f"Both master and cluster are set (master={master!r}): give one "
                "of them."
            )
        self._tpu_config = tpu_config or TPUConfig()
        self._cluster = cluster
        if master is not None:
            self._master = master
        elif cluster is not None:
            self._master = cluster.master()
        if evaluation_master is not None:
            self._evaluation_master = evaluation_master
        elif not self._evaluation_master and self.task_type != "evaluator":
            self._evaluation_master = self._master

    @property
    def tpu_config(self) -> Any:
        return self._tpu_config

    @property
    def cluster(self) -> Any:
        return self._cluster

    def replace(self, **kwargs: Any) -> RunConfig:
        """As `keras_estimator.RunConfig.replace`, and `tpu_config` too."""
        tpu_config = kwargs.pop("tpu_config", self._tpu_config)
        new = super().replace(**kwargs)
        assert isinstance(new, RunConfig)  # copy.copy keeps the class
        new._tpu_config = tpu_config
        return new


class EmbeddingConfigSpec(
    collections.namedtuple(
        "EmbeddingConfigSpec",
        [
            "feature_columns",
            "tensor_core_feature_columns",
            "optimization_parameters",
            "clipping_limit",
            "pipeline_execution_with_tensor_core",
            "experimental_gradient_multiplier_fn",
            "feature_to_config_dict",
            "table_to_config_dict",
            "partition_strategy",
            "profile_data_directory",
        ],
    )
):
    """2.15's description of TPU embedding tables, kept so programs import.

    TPU embedding tables are not provided: `TPUEstimator` refuses a spec with
    a ValueError saying what to use instead.
    """

    def __new__(
        cls,
        feature_columns: Any = None,
        optimization_parameters: Any = None,
        clipping_limit: Any = None,
        pipeline_execution_with_tensor_core: bool = False,
        experimental_gradient_multiplier_fn: Any = None,
        feature_to_config_dict: Any = None,
        table_to_config_dict: Any = None,
        partition_strategy: str = "div",
        profile_data_directory: Any = None,
    ) -> EmbeddingConfigSpec:
        return super().__new__(
            cls,
            feature_columns,
            None,
            optimization_parameters,
            clipping_limit,
            pipeline_execution_with_tensor_core,
            experimental_gradient_multiplier_fn,
            feature_to_config_dict,
            table_to_config_dict,
            partition_strategy,
            profile_data_directory,
        )
