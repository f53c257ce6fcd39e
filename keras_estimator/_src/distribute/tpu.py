"""TPUStrategy for an Estimator: the TPU system set up, or a clear error.

TPUEstimator programs named their TPU in `tpu.RunConfig(cluster=...)` and
set `TPUConfig(iterations_per_loop=N)`. Here the TPU becomes a
`tf.distribute.TPUStrategy` passed as `RunConfig(train_distribute=...)`, and
`RunConfig(steps_per_loop=N)` plays the part of `iterations_per_loop`: each
compiled call runs N steps on the TPU before hooks run on the host.
"""

from __future__ import annotations

import logging
from typing import Any

import tensorflow as tf

logger = logging.getLogger("keras_estimator")


def tpu_strategy(tpu: Any = "local") -> tf.distribute.TPUStrategy:
    """Connects to a TPU, initializes it, and returns a TPUStrategy over it.

    Args:
        tpu: what `tf.distribute.cluster_resolver.TPUClusterResolver` takes:
            `"local"` on a Cloud TPU VM (the default), a TPU name or a
            `grpc://` address of a TPU node, or a resolver already made.

    Returns:
        A `tf.distribute.TPUStrategy` for `RunConfig(train_distribute=...)`.

    Raises:
        TypeError: `tpu` is neither a string nor a TPUClusterResolver.
        ValueError: no TPU was found there (this TensorFlow may lack TPU
            support: Cloud TPU VMs need the `tensorflow-tpu` package of the
            same version).

    Example:
        >>> config = keras_estimator.RunConfig(
        ...     train_distribute=tpu_strategy(), steps_per_loop=100)  # doctest: +SKIP
    """
    resolver_type = tf.distribute.cluster_resolver.TPUClusterResolver
    if isinstance(tpu, resolver_type):
        resolver = tpu
    elif isinstance(tpu, str):
        resolver = resolver_type(tpu=tpu)
    else:
        raise TypeError(
            f"tpu must be a TPU name, address or 'local', or a TPUClusterResolver; "
            f"got {tpu!r} of type {type(tpu).__name__}."
        )
    try:
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except (tf.errors.NotFoundError, tf.errors.InvalidArgumentError) as error:
        raise ValueError(
            f"No TPU found for tpu={tpu!r}: {_first_line(error)}. On a Cloud TPU "
            "VM pass tpu='local' and install the `tensorflow-tpu` package of "
            f"this TensorFlow's version ({tf.__version__}); for a TPU node pass "
            "its name or grpc:// address."
        ) from None
    strategy = tf.distribute.TPUStrategy(resolver)
    logger.info("TPUStrategy with %d replicas.", strategy.num_replicas_in_sync)
    return strategy


def _first_line(error: Exception) -> str:
    text = getattr(error, "message", None) or str(error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__
