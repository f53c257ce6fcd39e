"""A graph's count of the random operations it seeded from its graph seed.

Also: the one state per call of a model_fn's seeded random ops (`RandomStates`,
see the second part of this module).

Checked on TensorFlow 2.21 (and the same in 2.15). With a graph seed set and
no operation seed given, `tf.compat.v1.get_seed` gives a random operation
the pair (graph seed, n), n counting such operations in that graph from 0,
and counts one more. tf.estimator 2.15 built a model_fn's initializers in
its graph, so the n-th unseeded random initializer got n: reading and
setting the count lets the variable store give an initializer, computed in
a graph of its own, the pair it would have had in the model_fn's graph.

The same holds for what an input_fn builds: tf.estimator 2.15 called it in a
fresh graph seeded with `RunConfig.tf_random_seed`, so `shuffle(seed=2)` got
(seed, 2) and the n-th unseeded random op of the input_fn got (seed, n).
Eagerly, `get_seed` takes the global seed and asks the eager context for an
operation seed; `input_fn_seeds` makes those 2.15's for the input_fn's call
and puts the context's own back after it.

A random op of 2.15's input_fn graph began its sequence on every call (a new
graph each train/evaluate/predict call). An eager random op instead reuses
the kernel the eager context cached for its seeds, which goes on from where
the previous call left it. So while an input_fn runs, the first eager
random kernel op whose seeds an earlier one already had since the cache was
last cleared clears the eager kernel cache first (what `set_global_seed`
does), and starts again as 2.15's did. Dataset ops (`shuffle`) take their
seeds as inputs, not as kernel attributes, and restart with each iterator;
ops in a `Dataset.map` function run in the iterator's own kernels: neither
needs it.

Private symbols touched: `random_seed._graph_to_seed_dict`, the per-graph
count `get_seed` reads and advances (a weak dict keyed by graph), the eager
context's `_seed` and `_rng` (the global seed, and the generator its
`_internal_operation_seed` draws from, which a context never seeded lacks),
`random_seed.get_seed` (wrapped while an input_fn runs, in its thread only,
and replaced inside `seeds_from`),
its `_truncate_seed` and `DEFAULT_GRAPH_SEED`, and the context's
`clear_kernel_cache`.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import Any

TOUCHES = (
    "tensorflow.python.framework.random_seed:_graph_to_seed_dict",
    "tensorflow.python.eager.context:Context()._seed",
    "tensorflow.python.eager.context:Context._internal_operation_seed",
    "tensorflow.python.eager.context:Context.clear_kernel_cache",
    "tensorflow.python.framework.random_seed:get_seed",
    "tensorflow.python.framework.random_seed:_truncate_seed",
    "tensorflow.python.framework.random_seed:DEFAULT_GRAPH_SEED",
    "tensorflow.python.ops.gen_random_ops:random_uniform",
    "tensorflow.python.ops.gen_random_ops:random_standard_normal",
    "tensorflow.python.ops.gen_random_ops:truncated_normal",
    "tensorflow.python.ops.gen_stateful_random_ops:stateful_uniform",
    "tensorflow.python.ops.gen_stateful_random_ops:stateful_standard_normal_v2",
    "tensorflow.python.ops.gen_stateful_random_ops:stateful_truncated_normal",
)


def _counts() -> Any:
    from tensorflow.python.framework import random_seed

    return random_seed._graph_to_seed_dict


def op_seed_count(graph: Any) -> int:
    """How many random operations of `graph` took their seed from its count."""
    return int(_counts().get(graph, 0))


def set_op_seed_count(graph: Any, count: int) -> None:
    """Makes the next unseeded random operation of `graph` get `(seed, count)`."""
    _counts()[graph] = count


class _Counting:
    """Hands out 0, 1, 2, ... where the eager context draws an operation seed."""

    def __init__(self) -> None:
        self._next = 0

    def randint(self, low: int, high: int) -> int:
        del low, high
        value, self._next = self._next, self._next + 1
        return value


# Seeds eager random kernels of input_fns had since the kernel cache was
# last cleared: a kernel with one of them may be cached, part-way through.
_seeds_in_kernels: set[tuple[int, int]] = set()


class InputFnRandomOps:
    """What `input_fn_seeds` saw while the input_fn ran."""

    def __init__(self) -> None:
        self.ran_eagerly = False  # an eager random kernel op (not a dataset's) ran


class _RestartingSeeds:
    """`random_seed.get_seed` as in 2.15's input_fn graph, restarting eager kernels.

    It clears the kernel cache before an eager kernel's seeds repeat. With
    no graph seed (`tf_random_seed` None) an op seed s gets (default graph
    seed, s), as 2.15's unseeded graph gave it, whatever global seed the
    program set.
    """

    def __init__(
        self, get_seed: Any, thread: int, seen: InputFnRandomOps, graph_seed: int | None
    ) -> None:
        self._get_seed = get_seed
        self._thread = thread
        self._seen = seen
        self._graph_seed = graph_seed

    def __call__(self, op_seed: Any) -> Any:
        seeds = self._get_seed(op_seed)
        if threading.get_ident() != self._thread:
            return seeds  # another thread's op
        from tensorflow.python.eager import context
        from tensorflow.python.framework import random_seed

        if self._graph_seed is None and op_seed is not None:
            seeds = (random_seed.DEFAULT_GRAPH_SEED, random_seed._truncate_seed(op_seed))

        # tf.data's seeds are dataset inputs (its get_seed calls this one).
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if not context.executing_eagerly() or caller.startswith("tensorflow.python.data"):
            return seeds
        self._seen.ran_eagerly = True
        if seeds[0] is None:
            return seeds  # fresh random seeds: a new kernel
        pair = (int(seeds[0]), int(seeds[1]))
        if pair in _seeds_in_kernels:
            context.context().clear_kernel_cache()
            _seeds_in_kernels.clear()
        _seeds_in_kernels.add(pair)
        return seeds


@contextlib.contextmanager
def seeds_from(get_seed: Any) -> Iterator[None]:
    """Inside, every random op asks `get_seed(op_seed)` for its seed pair.

    TensorFlow's own answer comes back when the block ends. Used while an
    input_fn runs and by `DeterministicRandomTestTool.scope()`.
    """
    from tensorflow.python.framework import random_seed

    original = random_seed.get_seed
    random_seed.get_seed = get_seed
    try:
        yield
    finally:
        random_seed.get_seed = original


@contextlib.contextmanager
def _restarting_kernels(seen: InputFnRandomOps, graph_seed: int | None) -> Iterator[None]:
    from tensorflow.python.framework import random_seed

    original = random_seed.get_seed
    if isinstance(original, _RestartingSeeds):  # an input_fn called inside one
        yield
        return
    with seeds_from(_RestartingSeeds(original, threading.get_ident(), seen, graph_seed)):
        yield


@contextlib.contextmanager
def input_fn_seeds(seed: int | None) -> Iterator[InputFnRandomOps]:
    """Random ops made inside get the seeds a 2.15 graph seeded `seed` gave.

    With `seed` None an op seed s gets (default graph seed, s), as in
    2.15's unseeded graph, and ops without one get the eager context's
    seeds (2.15 drew fresh ones). Either way an eager random op begins its
    sequence again on every call, as an op of 2.15's new graph did.

    Yields:
        An `InputFnRandomOps` telling, once the block is done, whether an
        eager random op ran in it.
    """
    # The eager context's seed and TensorFlow's get_seed are the process's:
    # one thread's input_fn at a time sets them.
    with _SEED_STATE:
        with _input_fn_seeds(seed) as seen:
            yield seen


# Held while an input_fn runs with seeds set for it (reentrant: an
# input_fn may call another), and while the process's seeds are set.
_SEED_STATE = threading.RLock()


def set_process_seed(seed: int) -> None:
    """Seeds Python's, NumPy's and TensorFlow's generators, between input_fns."""
    import keras

    with _SEED_STATE:
        keras.utils.set_random_seed(seed)


@contextlib.contextmanager
def _input_fn_seeds(seed: int | None) -> Iterator[InputFnRandomOps]:
    seen = InputFnRandomOps()
    _input_fn_counts.value = 0
    _input_fn_counts.seed = seed
    if seed is None:
        with _restarting_kernels(seen, None):
            yield seen
        return
    from tensorflow.python.eager import context

    ctx = context.context()
    saved_seed, saved_rng = ctx._seed, getattr(ctx, "_rng", None)
    # Set directly: `set_global_seed` also clears the eager kernel cache,
    # which made every later eager op rebuild its kernel (a one-example
    # predict() took 19 ms instead of 7). The input_fn's dataset ops take
    # their seeds as inputs, so no cached kernel holds a stale seed.
    ctx._seed = int(seed)
    ctx._rng = _Counting()
    try:
        with _restarting_kernels(seen, int(seed)):
            yield seen
    finally:
        _input_fn_counts.value = ctx._rng._next
        ctx._seed = saved_seed
        if saved_rng is None:
            del ctx._rng
        else:
            ctx._rng = saved_rng


# The count of random ops the last input_fn called in this thread seeded
# from the graph seed: 2.15 called the input_fn in the model_fn's graph, so
# the model_fn's count went on from there.
_input_fn_counts = threading.local()


def input_fn_graph_seed() -> int | None:
    """The graph seed of the input_fn running in this thread (`tf_random_seed`)."""
    return getattr(_input_fn_counts, "seed", None)


def last_input_fn_seed_count() -> int:
    """How many random ops the last input_fn of this thread seeded from the graph seed."""
    return int(getattr(_input_fn_counts, "value", 0))


# ---- a model_fn's seeded random ops: one sequence per op and call -----------
#
# tf.estimator 2.15 ran a model_fn's random ops in one session per call: a
# seeded op's sequence went on from step to step within the call and began
# again with the next call's new graph. Here a mode's steps run in several
# compiled functions (the fused loop, fetching steps, a first step called
# directly), each holding its own kernel of the op with its own position,
# kept from call to call. So while the model_fn is traced for
# train/evaluate/predict, `RandomUniform`, `RandomStandardNormal` and
# `TruncatedNormal` with seeds are made as the stateful ops of
# `tf.random.Generator` (Philox) reading one state variable per op and mode,
# which every function shares; the Estimator puts the state back to its
# start at the beginning of each call. With the state [0, seed2, seed] the
# Philox counter and key are the legacy kernel's (key = seed, counter's
# high word = seed2), and both skip 256 samples per output element: the
# draws are the legacy op's, value for value (checked on 2.21).
# `RandomUniformInt` draws differently and keeps the legacy kernel.
#
# 2.15 called the input_fn in the same graph first, so the model_fn's count
# began after the input_fn's random ops (an unseeded `shuffle`, say): a
# trace's count starts at the input_fn's (`last_input_fn_seed_count`), and
# an op seeded from that count starts each call from the count of that
# call's input_fn.
#
# Private symbols touched: `gen_random_ops.random_uniform`,
# `random_standard_normal` and `truncated_normal` (wrapped; random_ops calls
# them through the module), and `gen_stateful_random_ops.stateful_uniform`,
# `stateful_standard_normal_v2`, `stateful_truncated_normal`.

_PHILOX = 1  # tf.random.Algorithm.PHILOX
_STATEFUL_FORMS = {
    "random_uniform": ("stateful_uniform", "RandomUniform"),
    "random_standard_normal": ("stateful_standard_normal_v2", "RandomStandardNormal"),
    "truncated_normal": ("stateful_truncated_normal", "TruncatedNormal"),
}
_active = threading.local()


class RandomStates:
    """The state variables of a model_fn's seeded random ops, per mode and op."""

    def __init__(self) -> None:
        # (mode, op name, seed, seed2 less the input_fn's count when counted,
        # counted) -> its state.
        self._states: dict[tuple[str, str, int, int, bool], Any] = {}
        self._input_counts: dict[str, int] = {}

    def input_count(self, mode: str) -> int:
        """The random ops `mode`'s input_fn seeded from the graph seed, this call.

        Before the mode's first restart, that of the input_fn just called.
        """
        count = self._input_counts.get(mode)
        return last_input_fn_seed_count() if count is None else count

    def variable(self, mode: str, name: str, seed: int, seed2: int, counted: bool) -> Any:
        """The state of op `name` of `mode`'s traces (made at its start).

        `counted`: whether `seed2` is the graph's count (no op seed given),
        which went on from the input_fn's.
        """
        import tensorflow as tf

        offset = self.input_count(mode) if counted else 0
        key = (mode, name, seed, seed2 - offset, counted)
        state = self._states.get(key)
        if state is None:
            from tensorflow.python.ops import resource_variable_ops

            # Made past the variable creator scopes: the state is no model
            # variable. Checkpoints, `get_variable_names()` and the
            # variable collections hold 2.15's variables only (each call
            # begins the sequences again anyway).
            with tf.init_scope():
                state = resource_variable_ops.ResourceVariable(
                    _start(seed, seed2), dtype=tf.int64, trainable=False, name="random_state"
                )
            self._states[key] = state
        return state

    def restart(self, mode: str) -> None:
        """Begins `mode`'s random sequences again, as 2.15's new graph per call did.

        Called once the call's input_fn ran: ops seeded from the graph's
        count start from that input_fn's count.
        """
        count = last_input_fn_seed_count()
        self._input_counts[mode] = count
        for (state_mode, _, seed, base, counted), state in self._states.items():
            if state_mode == mode:
                state.assign(_start(seed, base + count if counted else base))


def _start(seed: int, seed2: int) -> list[int]:
    return [0, int(seed2), int(seed)]


def _stateful(name: str, original: Any) -> Any:
    from tensorflow.python.ops import gen_stateful_random_ops

    stateful_name, op_type = _STATEFUL_FORMS[name]

    def make(shape: Any, dtype: Any, seed: int = 0, seed2: int = 0, name: Any = None) -> Any:
        import tensorflow as tf

        active = getattr(_active, "value", None)
        if (
            active is None
            or not (seed or seed2)
            or tf.executing_eagerly()
            or tf.compat.v1.get_default_graph() is not active[2]
            or tf.distribute.has_strategy()
        ):
            return original(shape, dtype, seed=seed, seed2=seed2, name=name)
        states, mode, graph = active
        counted = getattr(_active, "op_seed", _UNSEEN) is None
        _active.op_seed = _UNSEEN
        op_name = graph.unique_name(name or op_type, mark_as_used=False)
        state = states.variable(mode, op_name, seed, seed2, counted)
        make_stateful = getattr(gen_stateful_random_ops, stateful_name)
        return make_stateful(state.handle, _PHILOX, shape, dtype=dtype, name=name or op_type)

    make.original = original  # type: ignore[attr-defined]
    return make


_UNSEEN = object()


class _RecordingGetSeed:
    """`random_seed.get_seed`, noting in this thread the op seed it was last given."""

    def __init__(self, get_seed: Any) -> None:
        self.original = get_seed

    def __call__(self, op_seed: Any) -> Any:
        if getattr(_active, "value", None) is not None:
            _active.op_seed = op_seed
        return self.original(op_seed)


_wrapping_lock = threading.Lock()
_wrapping_depth = 0
_unwrapped: dict[str, Any] = {}


@contextlib.contextmanager
def _wrapped_random_kernels() -> Iterator[None]:
    """The legacy random kernels' makers wrapped, for as long as a trace runs.

    Nothing stays patched: the first trace to enter wraps
    `gen_random_ops`' three makers and `random_seed.get_seed`, the last to
    leave puts the originals back (unless something else wrapped them
    meanwhile, which then keeps what it wrapped).
    """
    global _wrapping_depth
    from tensorflow.python.framework import random_seed
    from tensorflow.python.ops import gen_random_ops

    with _wrapping_lock:
        if _wrapping_depth == 0:
            _unwrapped["get_seed"] = random_seed.get_seed
            random_seed.get_seed = _RecordingGetSeed(random_seed.get_seed)
            for name in _STATEFUL_FORMS:
                current = getattr(gen_random_ops, name)
                _unwrapped[name] = current
                setattr(gen_random_ops, name, _stateful(name, current))
        _wrapping_depth += 1
    try:
        yield
    finally:
        with _wrapping_lock:
            _wrapping_depth -= 1
            if _wrapping_depth == 0:
                if isinstance(random_seed.get_seed, _RecordingGetSeed):
                    random_seed.get_seed = _unwrapped["get_seed"]
                for name in _STATEFUL_FORMS:
                    if getattr(getattr(gen_random_ops, name), "original", None) is not None:
                        setattr(gen_random_ops, name, _unwrapped[name])
                _unwrapped.clear()


@contextlib.contextmanager
def shared_random_states(states: RandomStates | None, mode: str) -> Iterator[None]:
    """Seeded random ops made meanwhile, in this thread's graph, read `states`.

    No effect with `states` None, eagerly, or under a distribution strategy
    (each replica's op keeps its own kernel, as before).
    """
    import tensorflow as tf

    if states is None or tf.executing_eagerly():
        yield
        return
    graph = tf.compat.v1.get_default_graph()
    if op_seed_count(graph) == 0 and not tf.distribute.has_strategy():
        # The model_fn's count goes on from the input_fn's, as in 2.15's graph.
        set_op_seed_count(graph, states.input_count(mode))
    saved = getattr(_active, "value", None)
    _active.value = (states, mode, graph)
    try:
        with _wrapped_random_kernels():
            yield
    finally:
        _active.value = saved
