"""Canary: every private TensorFlow/Keras symbol tf_internals relies on exists.

Each `keras_estimator._src.tf_internals` module names the private symbols it
touches in a `TOUCHES` tuple of `"module:attribute.path"` strings. A
TensorFlow or Keras upgrade that removes one fails here, by name, instead of
deep inside a training run.

Path syntax, resolved left to right from the imported module:
  `Name.attr`       getattr (inherited attributes count);
  `Class().attr`    the attribute of an instance of `Class`, made by
                    `_INSTANCES` below (for attributes set in `__init__`);
  `__dict__.name`   a mapping's key: `Class.__dict__.name` asserts the class
                    itself defines `name` (not a base), as code that takes
                    the method from `Class.__dict__` needs; the same applies
                    to `DESCRIPTOR.fields_by_name.field` for proto fields.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from keras_estimator._src import tf_internals
from keras_estimator._src.tf_internals import v1_session_hooks


def _make_summary_writer(tmp_path: Path) -> Any:
    import tensorflow as tf

    return tf.summary.create_file_writer(str(tmp_path))


def _make_concrete_function(tmp_path: Path) -> Any:
    import tensorflow as tf

    return tf.function(lambda x: x + 1.0).get_concrete_function(tf.TensorSpec([]))


def _make_graph(tmp_path: Path) -> Any:
    from tensorflow.python.framework import ops

    return ops.Graph()


def _make_func_graph(tmp_path: Path) -> Any:
    from tensorflow.python.framework import func_graph

    return func_graph.FuncGraph("canary")


def _make_context(tmp_path: Path) -> Any:
    from tensorflow.python.eager import context

    return context.context()


def _v1_optimizer_factory(class_name: str) -> Callable[[Path], Any]:
    def make(tmp_path: Path) -> Any:
        import tensorflow as tf

        extra = {"momentum": 0.9} if class_name == "MomentumOptimizer" else {}
        return getattr(tf.compat.v1.train, class_name)(0.1, **extra)

    return make


_V1_OPTIMIZERS = {
    "adagrad": "AdagradOptimizer",
    "adam": "AdamOptimizer",
    "ftrl": "FtrlOptimizer",
    "rmsprop": "RMSPropOptimizer",
    "gradient_descent": "GradientDescentOptimizer",
    "momentum": "MomentumOptimizer",
    "proximal_adagrad": "ProximalAdagradOptimizer",
    "proximal_gradient_descent": "ProximalGradientDescentOptimizer",
    "adadelta": "AdadeltaOptimizer",
}


def _make_keras_optimizer(tmp_path: Path) -> Any:
    import keras

    return keras.optimizers.SGD()


def _make_mirrored_extended(tmp_path: Path) -> Any:
    import tensorflow as tf

    return tf.distribute.MirroredStrategy(["/cpu:0"]).extended


def _make_collective_keys(tmp_path: Path) -> Any:
    from tensorflow.python.distribute import cross_device_utils

    return cross_device_utils.CollectiveKeys()


def _make_resource_tracker(tmp_path: Path) -> Any:
    from tensorflow.python.trackable import resource

    return resource.ResourceTracker()


def _make_variable_store(tmp_path: Path) -> Any:
    from tensorflow.python.ops import variable_scope

    return variable_scope._VariableStore()


# "module:Class" -> a function making an instance of it (given a tmp dir).
def _make_tensor_slice_dataset(tmp_path: Path) -> Any:
    import tensorflow as tf

    return tf.data.Dataset.from_tensor_slices([1.0, 2.0])


def _make_tensor_dataset(tmp_path: Path) -> Any:
    import tensorflow as tf

    return tf.data.Dataset.from_tensors([1.0, 2.0])


def _make_dataset_iterator(tmp_path: Path) -> Any:
    import tensorflow as tf

    return iter(tf.data.Dataset.range(2))


def _make_per_replica_spec(tmp_path: Path) -> Any:
    import tensorflow as tf
    from tensorflow.python.distribute import values

    return values.PerReplicaSpec(tf.TensorSpec([2, 3]), tf.TensorSpec([2, 3]))


def _stock_hook_factory(class_name: str) -> Callable[[Path], Any]:
    def make(tmp_path: Path) -> Any:
        import tensorflow as tf
        from tensorflow.python.training import basic_session_run_hooks

        arguments: dict[str, Any] = {
            "StopAtStepHook": {"num_steps": 1},
            "StepCounterHook": {},
            "SummarySaverHook": {"save_steps": 1, "output_dir": str(tmp_path), "summary_op": 0},
            "CheckpointSaverHook": {"checkpoint_dir": str(tmp_path), "save_steps": 1},
            "GlobalStepWaiterHook": {"wait_until_step": 0},
            "ProfilerHook": {"save_steps": 1, "output_dir": str(tmp_path)},
        }[class_name]
        with tf.Graph().as_default():  # ProfilerHook opens a TF1 FileWriter
            return getattr(basic_session_run_hooks, class_name)(**arguments)

    return make


def _make_v1_saver(tmp_path: Path) -> Any:
    import tensorflow as tf

    with tf.Graph().as_default():
        variable = tf.compat.v1.Variable(1.0, name="v")
        return tf.compat.v1.train.Saver([variable], max_to_keep=2)


_INSTANCES: dict[str, Callable[[Path], Any]] = {
    "tensorflow.python.training.saver:Saver": _make_v1_saver,
    **{
        f"tensorflow.python.training.basic_session_run_hooks:{name}": _stock_hook_factory(name)
        for name in v1_session_hooks.REMADE
    },
    "tensorflow.python.framework.ops:Graph": _make_graph,
    "tensorflow.python.eager.polymorphic_function.concrete_function:ConcreteFunction": (
        _make_concrete_function
    ),
    "tensorflow.python.framework.func_graph:FuncGraph": _make_func_graph,
    "tensorflow.python.ops.summary_ops_v2:_ResourceSummaryWriter": _make_summary_writer,
    "tensorflow.python.eager.context:Context": _make_context,
    **{
        f"tensorflow.python.training.{module}:{class_name}": _v1_optimizer_factory(class_name)
        for module, class_name in _V1_OPTIMIZERS.items()
    },
    "keras.src.optimizers.base_optimizer:BaseOptimizer": _make_keras_optimizer,
    "tensorflow.python.distribute.mirrored_strategy:MirroredExtended": (
        _make_mirrored_extended
    ),
    "tensorflow.python.distribute.cross_device_utils:CollectiveKeys": (
        _make_collective_keys
    ),
    "tensorflow.python.trackable.resource:ResourceTracker": _make_resource_tracker,
    "tensorflow.python.ops.variable_scope:_VariableStore": _make_variable_store,
    "tensorflow.python.data.ops.from_tensor_slices_op:_TensorSliceDataset": (
        _make_tensor_slice_dataset
    ),
    "tensorflow.python.data.ops.from_tensors_op:_TensorDataset": _make_tensor_dataset,
    "tensorflow.python.distribute.values:PerReplicaSpec": _make_per_replica_spec,
    "tensorflow.python.data.ops.iterator_ops:OwnedIterator": _make_dataset_iterator,
}


def _modules() -> list[Any]:
    names = sorted(info.name for info in pkgutil.iter_modules(tf_internals.__path__))
    return [importlib.import_module(f"{tf_internals.__name__}.{name}") for name in names]


_MODULES = _modules()


def _touches() -> list[Any]:
    params = []
    for module in _MODULES:
        short = module.__name__.rsplit(".", 1)[-1]
        for touch in getattr(module, "TOUCHES", ()):
            params.append(pytest.param(touch, id=f"{short}:{touch.split(':', 1)[-1]}"))
    return params


def test_modules_found() -> None:
    assert len(_MODULES) >= 2


@pytest.mark.parametrize("module", _MODULES, ids=lambda module: module.__name__)
def test_module_declares_touches(module: Any) -> None:
    touches = getattr(module, "TOUCHES", None)
    assert isinstance(touches, tuple) and touches, f"{module.__name__} has no TOUCHES"
    for touch in touches:
        assert isinstance(touch, str) and touch.count(":") == 1, touch
        assert touch.startswith(("tensorflow.", "keras.")), touch
    assert "Checked on" in (module.__doc__ or ""), f"{module.__name__}: no version"


def _is_mapping(obj: Any) -> bool:
    """A mapping proxy, dict, or protobuf's (upb) descriptor map."""
    kind = type(obj)
    return isinstance(obj, Mapping) or (
        not isinstance(obj, type) and hasattr(kind, "keys") and hasattr(kind, "__getitem__")
    )


def _resolve(touch: str, tmp_path: Path) -> Any:
    module_name, path = touch.split(":")
    obj: Any = importlib.import_module(module_name)
    done = module_name + ":"
    for part in path.split("."):
        instance = part.endswith("()")
        name = part[:-2] if instance else part
        if _is_mapping(obj):
            assert name in obj, f"{done} has no key {name!r}"
            obj = obj[name]
        else:
            assert hasattr(obj, name), f"{done} has no attribute {name!r}"
            obj = getattr(obj, name)
        done += name
        if instance:
            make = _INSTANCES.get(done)
            assert make is not None, f"no instance factory for {done} in _INSTANCES"
            made = make(tmp_path)
            assert isinstance(made, obj), f"_INSTANCES[{done!r}] makes {type(made)}"
            obj = made
            done += "()"
        done += "."
    return obj


@pytest.mark.parametrize("touch", _touches())
def test_private_symbol_exists(touch: str, tmp_path: Path) -> None:
    _resolve(touch, tmp_path)


def test_instance_factories_are_used() -> None:
    """A factory no TOUCHES entry names is stale (its entry was renamed)."""
    used = {
        touch.split("()", 1)[0]
        for module in _MODULES
        for touch in getattr(module, "TOUCHES", ())
        if "()" in touch
    }
    assert set(_INSTANCES) == used


# ---- values the code copies rather than imports ---------------------------


def test_object_graph_key_is_tensorflows() -> None:
    from tensorflow.python.trackable import base

    from keras_estimator._src.tf_internals import object_graph

    assert object_graph.OBJECT_GRAPH_KEY == base.OBJECT_GRAPH_PROTO_KEY


def test_variable_scope_keys_are_tensorflows() -> None:
    from tensorflow.python.framework import func_graph
    from tensorflow.python.ops import variable_scope

    from keras_estimator._src.tf_internals import variable_scopes

    assert set(variable_scopes._VARIABLE_SCOPE_KEYS) == {
        variable_scope._VARSCOPESTORE_KEY,
        variable_scope._VARSTORE_KEY,
    }
    assert set(variable_scopes._SHARED_COLLECTION_KEYS) == set(
        func_graph.ALLOWLIST_COLLECTIONS
    )


def test_keras_name_counter_key_is_the_one_keras_uses() -> None:
    import keras
    from keras.src.backend.common import global_state

    from keras_estimator._src.tf_internals import keras_naming

    with keras_naming.fresh_layer_names():
        keras.layers.Dense(1, name=None)
        counter = global_state.get_global_attribute(keras_naming._NAME_COUNTER_KEY)
        assert counter is not None and counter.get("dense") == 1


def test_v1_optimizer_settings_are_the_constructor_arguments() -> None:
    """Each attribute read is the one holding its argument (not just one that exists)."""
    import tensorflow as tf

    from keras_estimator._src.tf_internals import v1_optimizer_settings

    for class_name in _V1_OPTIMIZERS.values():
        names = v1_optimizer_settings._ATTRIBUTES[class_name][1]
        # Distinct values, so that an attribute holding another argument shows.
        arguments = {name: 0.5 + index / 100 for index, name in enumerate(names)}
        for flag in ("centered", "use_nesterov"):
            if flag in arguments:
                arguments[flag] = True
        if "learning_rate_power" in arguments:  # Ftrl takes only powers <= 0
            arguments["learning_rate_power"] *= -1
        optimizer = getattr(tf.compat.v1.train, class_name)(**arguments)
        assert v1_optimizer_settings.v1_optimizer_settings(optimizer) == arguments, class_name
    ftrl = tf.compat.v1.train.FtrlOptimizer(0.1, accum_name="a", linear_name="b")
    assert v1_optimizer_settings.ftrl_slot_names(ftrl) == {"accum": "a", "linear": "b"}
    assert v1_optimizer_settings.ftrl_slot_names(tf.compat.v1.train.FtrlOptimizer(0.1)) == {}
    assert v1_optimizer_settings.v1_optimizer_settings(tf.compat.v1.train.Optimizer(False, "x")) is None
