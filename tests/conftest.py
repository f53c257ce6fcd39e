"""Shared test setup: quiet TensorFlow, deterministic ops, hypothesis profiles.

Profiles: `ci` (default: few examples, drawn the same way on every run so a
clean checkout passes or fails reproducibly) and `thorough` (many examples,
drawn afresh each run; select with `HYPOTHESIS_PROFILE=thorough`).
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import tensorflow as tf  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# Two logical CPU devices, so MirroredStrategy tests have two replicas; set
# before TensorFlow initialises its devices.
_cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    _cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2
)
tf.config.experimental.enable_op_determinism()
tf.random.set_seed(0)  # deterministic ops need a seed for unseeded initializers
tf.get_logger().setLevel("ERROR")

settings.register_profile(
    "ci",
    max_examples=6,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "thorough",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
