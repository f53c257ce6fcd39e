"""`pruning.prune` against TensorFlow's own `WrappedFunction.prune`.

The copy made in one import must be the function TensorFlow's op-by-op lift
makes: the same ops under the same names, the same inputs and captures in
the same order and the same values, with nothing unfetched run (an
assignment left out leaves its variable alone). Its outputs keep the traced
static shapes (those set from Python included).
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

from keras_estimator._src.tf_internals import pruning

_FETCHABLE = (
    "dense",
    "refined",
    "branch",
    "looped",
    "looked_up",
    "sparse",
    "summed",
    "after_control",
    "defaulted",
    "assign",
    "apply",
    "print",
)


def _traced() -> tuple[tf.types.experimental.ConcreteFunction, dict, tf.Variable, tf.Variable]:
    """A wrapped function with a bit of everything a model_fn's trace holds."""
    weights = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="weights")
    counter = tf.Variable(0.0, name="counter")
    # Updated by an optimizer's kind of op, whose shape inference reads the
    # variable's handle data: a copy without it does not import.
    momentum = tf.Variable(tf.zeros([3, 2]), name="momentum")
    accumulator = tf.Variable(tf.ones([3, 2]), name="accumulator")
    scale = tf.constant(2.5)  # an eager tensor: captured
    table = tf.lookup.StaticHashTable(  # a resource: captured
        tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), default_value=-1
    )
    made: dict = {}

    def body(x: tf.Tensor, words: tf.Tensor) -> dict:
        dense = tf.matmul(x, weights) * scale
        unknown = tf.reshape(dense, tf.stack([-1, tf.shape(dense)[1]]))
        unknown.set_shape([None, 2])  # a refinement the GraphDef does not hold
        refined = tf.identity(unknown, name="refined")
        branch = tf.cond(tf.reduce_sum(x) > 0, lambda: dense + 1.0, lambda: dense - 1.0)
        looped = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0), (0, dense))[1]
        looked_up = table.lookup(words)
        sparse = tf.sparse.from_dense(tf.cast(looked_up > 0, tf.int64))
        summed = tf.reduce_sum(weights.read_value()) + 1.0
        with tf.control_dependencies([x.op]):
            after_control = tf.constant(7.0) + scale
        defaulted = tf.compat.v1.placeholder_with_default(tf.constant(3.0), [], name="default")
        assign = counter.assign_add(1.0)
        apply = tf.raw_ops.ResourceApplyProximalAdagrad(
            var=momentum.handle,
            accum=accumulator.handle,
            lr=tf.constant(0.5),
            l1=tf.constant(0.0),
            l2=tf.constant(0.0),
            grad=tf.ones([3, 2]),
        )
        print_op = tf.print("unfetched")
        made.update(
            dense=dense,
            refined=refined,
            branch=branch,
            looped=looped,
            looked_up=looked_up,
            sparse=sparse,
            summed=summed,
            after_control=after_control,
            defaulted=defaulted * 2.0,
            assign=assign.op if hasattr(assign, "op") else assign,
            apply=apply,
            momentum_variable=momentum,
            print=print_op,
        )
        return {"dense": dense}

    wrapped = tf.compat.v1.wrap_function(
        body, [tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([None], tf.string)]
    )
    return wrapped, made, weights, counter


_INPUTS = (
    tf.constant([[1.0, 2.0, 3.0], [-4.0, 0.5, 1.0]]),
    tf.constant(["a", "c"]),
)


def _both(wrapped, made, names, feeds):
    fetches = [made[name] for name in names]
    ours = pruning.prune(wrapped, feeds, fetches)
    theirs = wrapped.prune(feeds=feeds, fetches=fetches)
    return ours, theirs


def _ops(function) -> tuple[list[tuple[str, str]], list[str]]:
    """The copied ops by name, and the sources' placeholders by type.

    The placeholders' names are free to differ: TensorFlow's take the
    source's, which may be a scope of a copied op's name.
    """
    inputs = {id(t.op) for t in function.graph.inputs}
    copied = sorted(
        (op.name, op.type)
        for op in function.graph.get_operations()
        if id(op) not in inputs
    )
    placeholders = sorted(op.type for op in function.graph.get_operations() if id(op) in inputs)
    return copied, placeholders


def _values(structure):
    return [
        None if v is None else tf.convert_to_tensor(v).numpy()
        for v in tf.nest.flatten(structure, expand_composites=True)
    ]


@given(st.lists(st.sampled_from(_FETCHABLE), min_size=1, max_size=5, unique=True))
def test_a_prune_is_tensorflows_own(names):
    wrapped, made, _, counter = _traced()
    momentum = made["momentum_variable"]
    feeds = wrapped.inputs[:2]
    ours, theirs = _both(wrapped, made, names, feeds)
    assert _ops(ours) == _ops(theirs)
    assert [(t.dtype, t.shape.as_list() if t.shape.rank is not None else None) for t in ours.inputs] == [
        (t.dtype, t.shape.as_list() if t.shape.rank is not None else None) for t in theirs.inputs
    ]
    # The traced shapes: TensorFlow's own copy can know less (a table
    # lookup's copy loses its rank), never more.
    traced = [
        t.shape for n in names for t in tf.nest.flatten(made[n], expand_composites=True)
        if isinstance(t, tf.Tensor)
    ]
    assert [t.shape for t in ours.outputs] == traced
    for mine, theirs_shape in zip(ours.outputs, [t.shape for t in theirs.outputs], strict=True):
        assert mine.shape.is_compatible_with(theirs_shape)
    assert [op.name for op in ours.graph.control_outputs] == [
        op.name for op in theirs.graph.control_outputs
    ]
    before = counter.numpy()
    ours_out = ours(*_INPUTS)
    after_ours = counter.numpy()
    momentum_after_ours = momentum.numpy()
    theirs_out = theirs(*_INPUTS)
    after_theirs = counter.numpy()
    for a, b in zip(_values(ours_out), _values(theirs_out), strict=True):
        if a is None or b is None:
            assert a is None and b is None
        else:
            np.testing.assert_array_equal(a, b)
    # An assignment runs only when fetched, once per call, in both.
    assert after_ours - before == after_theirs - after_ours == (1.0 if "assign" in names else 0.0)
    # Proximal Adagrad, lr 0.5, gradient 1 from an accumulator of 1: each
    # update subtracts 0.5 / sqrt(accumulator + 1) and adds 1 to it.
    applied = "apply" in names
    first = -0.5 / np.sqrt(2.0) if applied else 0.0
    second = first - 0.5 / np.sqrt(3.0) if applied else 0.0
    np.testing.assert_allclose(momentum_after_ours, np.full([3, 2], first), rtol=1e-6)
    np.testing.assert_allclose(momentum.numpy(), np.full([3, 2], second), rtol=1e-6)


def test_static_shapes_set_from_python_survive_the_copy():
    wrapped, made, _, _ = _traced()
    ours = pruning.prune(wrapped, wrapped.inputs[:2], [made["refined"]])
    refined = [op for op in ours.graph.get_operations() if op.name == "refined"][0]
    assert refined.outputs[0].shape.as_list() == [None, 2]
    assert ours.outputs[0].shape.as_list() == [None, 2]


def test_the_copy_captures_what_the_original_captures_in_order():
    wrapped, made, weights, _ = _traced()
    ours, theirs = _both(wrapped, made, ["dense"], wrapped.inputs[:2])
    assert len(ours.graph.captures) == len(theirs.graph.captures)
    for (external_a, _), (external_b, _) in zip(
        ours.graph.captures, theirs.graph.captures, strict=True
    ):
        assert external_a is external_b
    weights.assign(tf.ones([3, 2]))  # the copy reads the variable itself
    np.testing.assert_array_equal(
        ours(*_INPUTS)[0].numpy(), (tf.matmul(_INPUTS[0], tf.ones([3, 2])) * 2.5).numpy()
    )


def test_structure_of_fetches_with_an_operation_comes_back_with_none():
    wrapped, made, _, _ = _traced()
    ours = pruning.prune(
        wrapped, wrapped.inputs[:2], {"value": made["summed"], "op": made["assign"]}
    )
    out = ours(*_INPUTS)
    assert out["op"] is None
    assert float(out["value"]) >= 1.0


def test_fetches_by_name():
    wrapped, made, _, _ = _traced()
    ours = pruning.prune(wrapped, wrapped.inputs[:2], [made["refined"].name])
    np.testing.assert_array_equal(
        ours(*_INPUTS)[0].numpy(),
        (tf.matmul(_INPUTS[0], tf.reshape(tf.range(6.0), [3, 2])) * 2.5).numpy(),
    )


def test_a_fetch_reading_an_input_not_fed_cannot_be_copied():
    wrapped, made, _, _ = _traced()
    with pytest.raises(pruning.PRUNE_ERRORS) as ours:
        pruning.prune(wrapped, [], [made["dense"]])
    with pytest.raises(pruning.PRUNE_ERRORS) as theirs:
        wrapped.prune(feeds=[], fetches=[made["dense"]])
    assert type(ours.value) is type(theirs.value)
    assert "placeholder" in str(ours.value)
