"""`TPUEstimator`: tf.compat.v1.estimator.tpu's Estimator, on this package's loop.

TPUEstimator programs run unchanged with `use_tpu=False` (what most of them
do off a TPU, and how 2.15 ran them on CPU and GPU), and with `use_tpu=True`
on a `tf.distribute.TPUStrategy`:

* `input_fn` and `model_fn` must take `params`; `params["batch_size"]` is the
  mode's batch size (`train_batch_size`, `eval_batch_size`,
  `predict_batch_size`), divided by the number of replicas under a strategy
  (each replica reads and computes its share), and absent while exporting.
  `params["use_tpu"]` says whether the step runs on the TPU.
* model_fn may return a `TPUEstimatorSpec` (or an `EstimatorSpec`); its
  `eval_metrics`, `host_call` and `scaffold_fn` work as off a TPU in 2.15.
* On a TPU, `TPUConfig.iterations_per_loop` steps run per device loop (as
  `RunConfig.steps_per_loop`). Making the estimator contacts no address: as
  in 2.15, the TPU (`tpu.RunConfig(cluster=...)`, or `master`, else the local
  TPU) is connected when the estimator first needs it, at the first
  `train`, `evaluate`, `predict` or export; a machine without one gets a
  ValueError then, and the batch sizes are checked against its replicas.

Not provided: TPU embedding tables (`embedding_config_spec`), and the
TPU-tagged graph that `export_to_tpu` added to SavedModels (the CPU serving
graph is always written); `batch_axis` and the input-pipeline layouts of
`TPUConfig` have no effect, since the strategy distributes the dataset, and
neither has `eval_on_tpu=False`: evaluation runs under the strategy that
holds the variables.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import math
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

from keras_estimator._src.base import fn_args
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.distribute.tpu import tpu_strategy
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.hooks.basic_hooks import StepCounterHook
from keras_estimator._src.tpu.tpu_config import (
    IterationsPerLoop,
    RunConfig,
    check_positive_integer,
    parse_iterations_per_loop,
)
from keras_estimator._src.tpu.tpu_estimator_spec import TPUEstimatorSpec

logger = logging.getLogger("keras_estimator")

_RESERVED_PARAMS = ("batch_size", "context")


class ExportSavedModelApiVersion(enum.Enum):
    """Which TPU export API 2.15 used; both write the same SavedModel here."""

    V1 = 1
    V2 = 2


class TPUEstimator(Estimator):
    """An Estimator that runs TPUEstimator programs; see the module.

    Args:
        model_fn: `model_fn(features, labels, mode, config, params)` returning a
            `TPUEstimatorSpec` or an `EstimatorSpec`; must take `params`.
        model_dir, warm_start_from: as for `Estimator`.
        config: A `tpu.RunConfig`.
        params: A dict for model_fn and input_fn, without the keys
            `batch_size` and `context`, which TPUEstimator sets.
        use_tpu: Run on a TPU (training, evaluation and prediction: an
            Estimator's variables live under one strategy).
        train_batch_size, eval_batch_size, predict_batch_size: Global batch
            sizes, given to input_fn and model_fn as `params["batch_size"]`;
            `train_batch_size` is required with `use_tpu`.
        batch_axis, export_to_tpu, export_to_cpu,
        export_saved_model_api_version: Accepted as 2.15 accepted them; see
            the module for what they do here.
        eval_on_tpu: Accepted; evaluation runs where training does.
        embedding_config_spec: Must be None (TPU embeddings are not provided).

    Raises:
        ValueError: `config` is not a `tpu.RunConfig`; `params` holds a
            reserved key; model_fn lacks `params`; with `use_tpu`, a batch
            size is not positive (or not divisible by the TPU's replicas) or
            no TPU is found; `embedding_config_spec` is given.
        TypeError: with `use_tpu`, a batch size is not an integer (2.15
            checked batch sizes only with `use_tpu`, and so does this class).
    """

    def __init__(
        self,
        model_fn: Callable[..., Any] | None = None,
        model_dir: str | None = None,
        config: RunConfig | None = None,
        params: dict[str, Any] | None = None,
        use_tpu: bool = True,
        train_batch_size: int | None = None,
        eval_batch_size: int | None = None,
        predict_batch_size: int | None = None,
        batch_axis: Any = None,
        eval_on_tpu: bool = True,
        export_to_tpu: bool = True,
        export_to_cpu: bool = True,
        warm_start_from: Any = None,
        embedding_config_spec: Any = None,
        export_saved_model_api_version: Any = ExportSavedModelApiVersion.V1,
    ) -> None:
        if config is None or not isinstance(config, RunConfig):
            raise ValueError(
                "`config` must be provided with type `tpu_config.RunConfig`; got "
                f"{config!r}. Pass config=tf.compat.v1.estimator.tpu.RunConfig(...)."
            )
        if params is not None and any(key in params for key in _RESERVED_PARAMS):
            raise ValueError(
                f"{list(_RESERVED_PARAMS)} are reserved keys but existed in params "
                f"{params}: TPUEstimator sets params['batch_size'] from "
                "train_batch_size / eval_batch_size / predict_batch_size."
            )
        _check_batch_sizes(
            use_tpu, train_batch_size, eval_batch_size, predict_batch_size
        )
        if embedding_config_spec is not None:
            raise ValueError(
                "embedding_config_spec is not supported: TPU embedding tables are "
                "not provided. Use tf.feature_column.embedding_column (or a Keras "
                "Embedding layer) in model_fn; it trains on any device."
            )
        if export_saved_model_api_version not in (1, 2, *ExportSavedModelApiVersion):
            raise ValueError(
                f"export_saved_model_api_version should be 1 or 2; got "
                f"{export_saved_model_api_version!r}."
            )
        _check_model_fn_args(model_fn)
        assert model_fn is not None  # _check_model_fn_args raised otherwise
        self._user_model_fn: Callable[..., Any] = model_fn
        self._use_tpu = bool(use_tpu)
        self._batch_sizes = {
            ModeKeys.TRAIN: train_batch_size,
            ModeKeys.EVAL: eval_batch_size,
            ModeKeys.PREDICT: predict_batch_size,
        }
        self._exporting = False
        iterations = _iterations_per_loop(config.tpu_config)
        if self._use_tpu:
            config = config.replace(steps_per_loop=_steps_per_loop(iterations))
        # As in 2.15, `log_step_count_steps` makes no "loss = ..." lines and no
        # StepCounterHook: an ExamplesPerSecondHook counts instead, every
        # ceil(log_step_count_steps / iterations_per_loop) steps (once per
        # device loop of 2.15's), or every iterations_per_loop seconds.
        self._examples_every = _examples_hook_schedule(
            config.log_step_count_steps, iterations
        )
        config = config.replace(log_step_count_steps=None)
        super().__init__(
            model_fn=self._tpu_model_fn,
            model_dir=model_dir,
            config=config,
            params=dict(params or {}),
            warm_start_from=warm_start_from,
        )
        self._replicas = 1
        # With use_tpu the TPU is connected at first use (`_connect_once`).
        self._tpu_connected = not self._use_tpu

    def _added_training_hooks(self) -> list[Any]:
        if self._examples_every is None:
            return []
        every_n_steps, every_n_secs = self._examples_every
        return [
            ExamplesPerSecondHook(
                self._batch_sizes[ModeKeys.TRAIN],
                every_n_steps=every_n_steps,
                every_n_secs=every_n_secs,
                output_dir=self._model_dir if self._config.save_summary_steps else None,
            )
        ]

    # ---- the TPU, connected at first use ------------------------------------
    def _connect_once(self) -> None:
        """Connects to the TPU and runs every mode on it, once (see the module).

        2.15 contacted the TPU's master only when a session ran; so does this
        class: making a TPUEstimator contacts no address, and a failed
        connection is tried again at the next call.
        """
        if self._tpu_connected:
            return
        config = self._config
        assert isinstance(config, RunConfig)  # checked when made; replace keeps it
        strategy = connect_tpu(config)
        replicas = strategy.num_replicas_in_sync
        _check_divisible(self._batch_sizes, replicas)
        self._config = config.replace(train_distribute=strategy, eval_distribute=strategy)
        self._hold_variables_under(strategy)
        self._replicas = replicas
        self._tpu_connected = True

    def train(self, *args: Any, **kwargs: Any) -> Any:
        self._connect_once()
        return super().train(*args, **kwargs)

    def evaluate(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self._connect_once()
        return super().evaluate(*args, **kwargs)

    def predict(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        # A generator, as `Estimator.predict`: nothing runs (nor connects)
        # before the first prediction is asked for.
        self._connect_once()
        yield from super().predict(*args, **kwargs)

    def _get_model(self, *args: Any, **kwargs: Any) -> Any:
        # Every other use of the model (export, an in-memory evaluation, a
        # Keras model of this estimator) is made here, under the TPU.
        self._connect_once()
        return super()._get_model(*args, **kwargs)

    # ---- model_fn and input_fn --------------------------------------------
    def _tpu_model_fn(
        self, features: Any, labels: Any, mode: str, config: Any, params: Any
    ) -> Any:
        """Calls the user's model_fn with TPUEstimator's params; see the module."""
        if "params" not in fn_args.fn_args(self._user_model_fn):
            # Where 2.15 raised it: when model_fn is called, not when built.
            raise ValueError(
                f"model_fn ({self._user_model_fn!r}) does not include params "
                "argument, required by TPUEstimator to pass batch size as "
                "params['batch_size']: add `params` to its parameters."
            )
        params = dict(params)
        if not self._exporting:
            batch_size = self._replica_batch_size(mode)
            if batch_size is not None:
                params["batch_size"] = batch_size
        params["use_tpu"] = self._use_tpu and not self._exporting
        accepted = fn_args.fn_args(self._user_model_fn)
        if "labels" not in accepted and labels is not None:
            raise ValueError(
                "model_fn does not take labels, but input_fn returns labels. Add "
                "`labels` to model_fn's parameters or return features only."
            )
        candidates = {
            "labels": labels,
            "mode": mode,
            "config": config,
            "params": params,
        }
        kwargs = {name: value for name, value in candidates.items() if name in accepted}
        spec = self._user_model_fn(features=features, **kwargs)
        if isinstance(spec, TPUEstimatorSpec):
            return spec.as_estimator_spec()
        return spec

    def _with_batch_size(
        self, input_fn: Callable[..., Any], mode: str
    ) -> Callable[..., Any]:
        """input_fn, called with params["batch_size"] for `mode`."""
        if "params" not in fn_args.fn_args(input_fn):
            raise ValueError(
                f"input_fn ({input_fn!r}) does not include params argument, "
                "required by TPUEstimator to pass batch size as "
                "params['batch_size']: add `params` to its parameters."
            )
        batch_size = self._replica_batch_size(mode)
        estimator_params = self._params

        def input_fn_with_batch_size(
            params: Any = None,
            config: Any = None,
            mode: Any = mode,
            input_context: Any = None,
        ) -> Any:
            params = dict(estimator_params)
            if batch_size is not None:
                params["batch_size"] = batch_size
            candidates = {"params": params, "config": config, "mode": mode}
            if input_context is not None:
                candidates["input_context"] = input_context
            return fn_args.call_with_accepted(input_fn, candidates)

        return input_fn_with_batch_size

    def _dataset(
        self,
        input_fn: Callable[..., Any],
        mode: str,
        input_context: tf.distribute.InputContext | None = None,
    ) -> tf.data.Dataset:
        return super()._dataset(
            self._with_batch_size(input_fn, mode), mode, input_context
        )

    def _replica_batch_size(self, mode: str) -> int | None:
        batch_size = self._batch_sizes.get(mode)
        if batch_size is None or self._replicas == 1:
            return batch_size  # as given, as 2.15 passed it on one device
        return batch_size // self._replicas

    # ---- export: no batch size, use_tpu False --------------------------------
    @contextlib.contextmanager
    def _export_mode(self) -> Iterator[None]:
        self._exporting = True
        try:
            yield
        finally:
            self._exporting = False

    def export_saved_model(self, *args: Any, **kwargs: Any) -> bytes:
        with self._export_mode():
            return super().export_saved_model(*args, **kwargs)

    def experimental_export_all_saved_models(self, *args: Any, **kwargs: Any) -> bytes:
        with self._export_mode():
            return super().experimental_export_all_saved_models(*args, **kwargs)


def _check_model_fn_args(model_fn: Any) -> None:
    """2.15's check of model_fn's parameters, made when the estimator is built."""
    if model_fn is None or not callable(model_fn):
        fn_args.validate_model_fn(model_fn)  # the Estimator's error for these
    names = fn_args.fn_args(model_fn)
    unexpected = [name for name in names if name not in fn_args.MODEL_FN_ARGS]
    if unexpected:
        raise ValueError(
            f"model_fn ({model_fn!r}) has following not expected args: "
            f"{unexpected}. It may take only {list(fn_args.MODEL_FN_ARGS)}."
        )
    if "features" not in names:
        raise ValueError(f"model_fn ({model_fn!r}) must include features argument.")


def _check_batch_sizes(use_tpu: bool, train: Any, eval_: Any, predict: Any) -> None:
    """2.15's checks, made only with use_tpu (off a TPU 2.15 passed them as given)."""
    if not use_tpu:
        return
    if train is None:
        raise ValueError(
            "`train_batch_size` cannot be `None` with use_tpu=True: pass the "
            "global training batch size."
        )
    for name, value in (
        ("train_batch_size", train),
        ("eval_batch_size", eval_),
        ("predict_batch_size", predict),
    ):
        if value is not None:
            check_positive_integer(name, value)


def _check_divisible(batch_sizes: dict[str, Any], replicas: int) -> None:
    """2.15's check, made once the TPU's replicas are known."""
    for mode, label in (
        (ModeKeys.TRAIN, "train"),
        (ModeKeys.EVAL, "eval"),
        (ModeKeys.PREDICT, "predict"),
    ):
        value = batch_sizes.get(mode)
        if value is not None and value % replicas:
            raise ValueError(
                f"{label} batch size {value} must be divisible by number of "
                f"replicas {replicas} (the TPU's): pass a multiple of {replicas}."
            )


def _iterations_per_loop(tpu_config: Any) -> IterationsPerLoop:
    """`tpu_config.iterations_per_loop`, parsed.

    2.15 took any object as `tpu.RunConfig(tpu_config=...)` and read its
    `iterations_per_loop`, `num_shards` and `num_cores_per_replica` when the
    TPUEstimator was made; so does this function.
    """
    iterations = parse_iterations_per_loop(_field(tpu_config, "iterations_per_loop"))
    _field(tpu_config, "num_shards")
    _field(tpu_config, "num_cores_per_replica")
    return iterations


def _field(tpu_config: Any, name: str) -> Any:
    if not hasattr(tpu_config, name):
        raise MissingTPUSetting(
            f"{type(tpu_config).__name__!r} object has no attribute {name!r}: "
            f"tpu.RunConfig(tpu_config={tpu_config!r}) must be a "
            "tpu.TPUConfig(...) or have its fields."
        )
    return getattr(tpu_config, name)


def _steps_per_loop(iterations: IterationsPerLoop) -> int | None:
    """The steps per device loop on a TPU: a count as given; one for a time."""
    if iterations.unit == "count":
        return iterations.value
    logger.warning(
        "iterations_per_loop=%r is a time: each device loop runs one step.",
        f"{iterations.value}s",
    )
    return None


def _examples_hook_schedule(
    log_step_count_steps: int | None, iterations: IterationsPerLoop
) -> tuple[int | None, float | None] | None:
    """(every_n_steps, every_n_secs) of 2.15's ExamplesPerSecondHook, or None."""
    if iterations.unit == "seconds":
        return None, float(iterations.value)
    if log_step_count_steps is None:
        return None
    return math.ceil(log_step_count_steps / iterations.value), None


class ExamplesPerSecondHook(StepCounterHook):
    """Logs and writes `global_step/sec` and `examples/sec`, as 2.15's TPUEstimator.

    Args:
        batch_size: the global training batch size.
        every_n_steps, every_n_secs, output_dir: as for `StepCounterHook`.
    """

    def __init__(
        self,
        batch_size: int | None,
        every_n_steps: int | None = 100,
        every_n_secs: float | None = None,
        output_dir: str | None = None,
    ) -> None:
        super().__init__(
            every_n_steps=every_n_steps, every_n_secs=every_n_secs, output_dir=output_dir
        )
        self._batch_size = batch_size

    def _log_and_record(self, elapsed_steps: int, elapsed_secs: float, step: int) -> None:
        rate = elapsed_steps / elapsed_secs if elapsed_secs > 0 else float("inf")
        self._record(self._SUMMARY_TAG, rate, step)
        if self._batch_size is not None:
            self._record("examples/sec", self._batch_size * rate, step)


class MissingTPUSetting(TypeError, AttributeError):
    """A tpu_config lacking a TPUConfig field (an AttributeError in 2.15)."""


def connect_tpu(config: RunConfig) -> tf.distribute.Strategy:
    """A TPUStrategy for the TPU `config` names (its cluster, master or 'local')."""
    if config.cluster is not None:
        return tpu_strategy(config.cluster)
    return tpu_strategy(config.master or "local")
