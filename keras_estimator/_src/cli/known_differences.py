"""What `keras-estimator check` says about names and idioms that are not plain.

Names of the public namespaces are read from `base.public_names`: a name
there is `supported` unless an entry here says otherwise. This module holds
the rest, one entry per name or idiom, each with a one-line note: what
behaves differently here (`differs`) or what does not work and the fix
(`unsupported`). docs/differences.md has the long form of each.

Patterns are written as a program spells them, with `tf.` for `tensorflow.`:

* `tf.contrib.*`: the name and everything under it;
* `tf.compat.v1.Session`: exactly that name (`tf.compat.v2.X` is `tf.X`);
* `estimator:KMeans`: the name `KMeans` in whichever tf.estimator namespace
  holds it (tf.estimator, tf.compat.v1.estimator, their experimental,
  inputs, export, tpu ... submodules, tf.keras.estimator);
* `estimator:*`: every name of those namespaces (for `keyword` entries).

An entry with `keyword` applies to a call of the name that passes that
keyword argument (and, with `keyword_value`, passes it as that constant).
"""

from __future__ import annotations

import dataclasses
import enum


class Status(str, enum.Enum):
    """How a tf.estimator 2.15 name or idiom fares here."""

    SUPPORTED = "supported"
    DIFFERS = "differs"
    UNSUPPORTED = "unsupported"


@dataclasses.dataclass(frozen=True)
class KnownDifference:
    """One name or idiom that is not simply supported.

    Attributes:
        pattern: What it matches (see the module docstring).
        status: `DIFFERS` or `UNSUPPORTED` (or `SUPPORTED`, with a note).
        note: One line: the difference, or what fails and the fix.
        keyword: Only calls passing this keyword argument match.
        keyword_value: With `keyword`, only this constant value matches
            (`None` matches any value but a literal `None`).
    """

    pattern: str
    status: Status
    note: str
    keyword: str | None = None
    keyword_value: object = None


ESTIMATOR_PREFIX = "estimator:"

_D = Status.DIFFERS
_U = Status.UNSUPPORTED

_SESSION_FIX = (
    "under install() eager execution stays on, so a TF1 session outside "
    "model_fn runs no graph of the program's; fix: move the graph code into "
    "model_fn/input_fn (or a tf.function), or build it under "
    "`with tf.Graph().as_default():`"
)

# The registry. Order matters only for reading: the most specific match wins
# (a keyword entry before its name's entry, an exact name before a prefix).
KNOWN_DIFFERENCES: tuple[KnownDifference, ...] = (
    # --- removed from TensorFlow 2 or private -------------------------------
    KnownDifference(
        "tf.contrib.*",
        _U,
        "tf.contrib was removed in TF 2; fix: use its TF 2 replacement "
        "(tf.compat.v1.*, tf.keras, tf.estimator, TF Addons); see the TF 2 "
        "migration guide",
    ),
    KnownDifference(
        "tensorflow_estimator.python.*",
        _U,
        "private tensorflow_estimator modules are not provided; fix: use the "
        "public name (tf.estimator.X / tf.compat.v1.estimator.X)",
    ),
    KnownDifference(
        "tf.python.estimator.*",
        _U,
        "private estimator modules are not provided; fix: use the public name "
        "(tf.estimator.X / tf.compat.v1.estimator.X)",
    ),
    # --- TF1 sessions and graph-mode switches -------------------------------
    KnownDifference("tf.Session", _U, "tf.Session is gone in TF 2; " + _SESSION_FIX),
    KnownDifference("tf.compat.v1.Session", _U, _SESSION_FIX),
    KnownDifference(
        "tf.compat.v1.summary.FileWriter",
        _U,
        "FileWriter needs graph mode and fails under eager execution; fix: "
        "tf.summary.create_file_writer(logdir) and tf.summary.scalar(..., "
        "step=...) outside model_fn, or tf.compat.v1.summary ops inside it",
    ),
    KnownDifference("tf.compat.v1.InteractiveSession", _U, _SESSION_FIX),
    KnownDifference(
        "tf.compat.v1.train.MonitoredTrainingSession",
        _U,
        "monitored sessions are not provided outside Estimator; fix: train "
        "with tf.estimator.Estimator (hooks work there) or a Keras fit loop",
    ),
    KnownDifference(
        "tf.compat.v1.train.MonitoredSession",
        _U,
        "monitored sessions are not provided outside Estimator; fix: train "
        "with tf.estimator.Estimator (hooks work there) or a Keras fit loop",
    ),
    KnownDifference(
        "tf.compat.v1.train.SingularMonitoredSession",
        _U,
        "monitored sessions are not provided outside Estimator; fix: train "
        "with tf.estimator.Estimator (hooks work there) or a Keras fit loop",
    ),
    KnownDifference(
        "tf.compat.v1.disable_eager_execution",
        _D,
        "a no-op with a warning under install(): eager execution stays on "
        "(model_fn and input_fn still run in graphs)",
    ),
    KnownDifference(
        "tf.compat.v1.disable_v2_behavior",
        _D,
        "a no-op with a warning under install(): eager execution stays on "
        "(model_fn and input_fn still run in graphs)",
    ),
    KnownDifference(
        "tf.compat.v1.train.Scaffold",
        _D,
        "an empty Scaffold works, and so do a saver that is a tf.train.Checkpoint "
        "or a tf.compat.v1.train.Saver, an init_fn (its session runs only what "
        "already ran eagerly), init_op/local_init_op made of initializers and the "
        "ready ops; an init_op assigning other values runs once on a fresh start "
        "(refused under a distribution strategy); init_feed_dict is refused",
    ),
    KnownDifference(
        "tf.compat.v1.train.Saver",
        _D,
        "made in a model_fn it builds no ops; as the Scaffold's saver its max_to_keep "
        "and keep_checkpoint_every_n_hours set model_dir's retention, and in EVAL or "
        "PREDICT its var_list keys say what each variable is read from; a TRAIN "
        "Saver renaming variables is refused, and its save()/restore() need a Session",
    ),
    KnownDifference(
        "tf.compat.v1.distribute.experimental.ParameterServerStrategy",
        _U,
        "the TF1 parameter-server strategy is not supported; fix: "
        "tf.distribute.experimental.ParameterServerStrategy (TF 2)",
    ),
    KnownDifference(
        "tf.keras.optimizers.legacy.*",
        _D,
        "Keras 3 has none (ImportError); under install() and `keras-estimator run` "
        "Adagrad, Adam, Ftrl, RMSprop and SGD train canned estimators with tf.keras "
        "2's semantics and variable names, and an Optimizer subclass must override "
        "get_updates; they have no minimize/apply_gradients: elsewhere use "
        "keras.optimizers.* or tf.compat.v1.train's optimizers",
    ),
    KnownDifference(
        "tf.compat.v1.layers.*",
        _D,
        "TensorFlow 2.21 raises AttributeError for it (Keras 3); install() and "
        "`keras-estimator run` serve it with TF1 variable names, and a program "
        "that only changes its import uses keras_estimator.compat.layers",
    ),
    # --- names of the estimator namespaces ----------------------------------
    KnownDifference(
        "estimator:BoostedTreesClassifier",
        _D,
        "tf.estimator 2.8's; trained by ydf (pip install 'keras_estimator[trees]') "
        "on the batches 2.8's steps would have read, all at once in memory (2.8 "
        "read new batches for each tree layer); the global step counts as 2.8's",
    ),
    KnownDifference(
        "estimator:BoostedTreesEstimator",
        _D,
        "tf.estimator 2.8's; trained by ydf (pip install 'keras_estimator[trees]') "
        "on the batches 2.8's steps would have read, all at once in memory (2.8 "
        "read new batches for each tree layer); the global step counts as 2.8's",
    ),
    KnownDifference(
        "estimator:BoostedTreesRegressor",
        _D,
        "tf.estimator 2.8's; trained by ydf (pip install 'keras_estimator[trees]') "
        "on the batches 2.8's steps would have read, all at once in memory (2.8 "
        "read new batches for each tree layer); the global step counts as 2.8's",
    ),
    KnownDifference(
        "estimator:KMeans",
        _D,
        "the first step chooses the initial centres from its batch and trains "
        "on it (2.15 used an extra batch), so train(steps=n) reads n batches; "
        "multi-replica strategies are refused with an error",
    ),
    KnownDifference(
        "estimator:LinearSDCA",
        _D,
        "label_vocabulary is refused, SDCA's summaries are not written, and "
        "multi-replica strategies are refused with an error",
    ),
    KnownDifference(
        "estimator:RNNClassifier",
        _D,
        "with several replicas each replica's gradient is clipped before "
        "summing (2.15 clipped the sum); int units builds a simple_rnn layer",
    ),
    KnownDifference(
        "estimator:RNNEstimator",
        _D,
        "with several replicas each replica's gradient is clipped before "
        "summing (2.15 clipped the sum); int units builds a simple_rnn layer",
    ),
    KnownDifference(
        "estimator:TPUEstimator",
        _U,
        "TPU embedding tables are not provided: a non-None "
        "embedding_config_spec raises ValueError; fix: Keras "
        "tf.tpu.experimental.embedding (TPUEmbedding) in model_fn, or drop it",
        keyword="embedding_config_spec",
    ),
    KnownDifference(
        "estimator:TPUEstimator",
        _D,
        "has no effect: evaluation runs under the strategy that holds the variables",
        keyword="eval_on_tpu",
        keyword_value=False,
    ),
    KnownDifference(
        "estimator:TPUEstimator",
        _D,
        "the TPU-tagged graph is not exported; SavedModels hold the CPU serving graph",
        keyword="export_to_tpu",
    ),
    KnownDifference(
        "estimator:TPUEstimator",
        _D,
        "runs on tf.distribute.TPUStrategy (use_tpu=True) or off TPU; "
        "batch_axis and TPUConfig's input layouts have no effect",
    ),
    KnownDifference(
        "estimator:pandas_input_fn",
        _D,
        "needs pandas (pip install 'keras_estimator[pandas]'); batching and "
        "shuffling are numpy_input_fn's",
    ),
    KnownDifference(
        "estimator:numpy_input_fn",
        _D,
        "shuffles every row each epoch (2.15 shuffled within queue_capacity), "
        "seeded from RunConfig.tf_random_seed: seeded runs are reproducible",
    ),
    KnownDifference(
        "estimator:FeedFnHook",
        _U,
        "feed_dict does not exist in TF 2: the hook fails in begin(); fix: "
        "feed data through input_fn (tf.data, e.g. Dataset.from_generator)",
    ),
    KnownDifference(
        "estimator:RunConfig",
        _D,
        "session_config is applied through tf.config (threads, GPUs, memory "
        "growth); its other fields are ignored with a warning",
        keyword="session_config",
    ),
    KnownDifference(
        "estimator:*",
        _D,
        "accepted, but variables are not partitioned (a 2.15 model_dir with "
        "several partitions per variable does not restore)",
        keyword="partitioner",
    ),
    KnownDifference(
        "estimator:*",
        _D,
        "accepted, but variables are not partitioned (a 2.15 model_dir with "
        "several partitions per variable does not restore)",
        keyword="input_layer_partitioner",
    ),
    # keras_estimator's own additions to tf.estimator's namespaces.
    *(
        KnownDifference(
            path,
            _D,
            "a keras_estimator extension: tf.estimator 2.15 had no such name, "
            "so the program runs only here",
        )
        for path in (
            "tf.estimator.HookCallback",
            "tf.estimator.ObserverHook",
            "tf.estimator.compat",
            "tf.estimator.install",
            "tf.estimator.uninstall",
            "tf.estimator.keras_model_fn",
            "tf.estimator.keras_model_from_estimator",
            "tf.estimator.model_fn_to_keras",
            "tf.estimator.model_to_estimator",
            "tf.estimator.experimental.multi_worker_strategy",
            "tf.estimator.experimental.tpu_strategy",
        )
    ),
)

# Idioms found by shape rather than by name (see check.py).
APPLY_GRADIENTS_IN_GROUP = KnownDifference(
    "tf.group(<optimizer>.apply_gradients(...), ...)",
    _D,
    "a Keras optimizer's update runs here; under 2.15 a tf.keras 2 "
    "optimizer's apply_gradients gave only its step increment to tf.group, "
    "so that program trained nothing",
)
RUN_CONTEXT_SESSION = KnownDifference(
    "run_context.session",
    _U,
    "hooks get no tf.compat.v1.Session; fix: fetch values with "
    "SessionRunArgs in before_run and read them in after_run",
)
# Names that run as in TF 1 inside the program's own
# `with tf.Graph().as_default():` (check.py finds the block).
RUN_IN_A_PROGRAMS_GRAPH = frozenset(
    {
        "tf.compat.v1.Session",
        "tf.compat.v1.InteractiveSession",
        "tf.compat.v1.summary.FileWriter",
    }
)
IN_A_PROGRAMS_GRAPH_NOTE = (
    "inside the program's `with tf.Graph().as_default():` it runs that "
    "graph, as in TF 1"
)
# The note of a name a tf.estimator namespace never had; check.py adds the fix.
UNKNOWN_NAME = "no such name in tf.estimator 2.15 ({namespace})"
