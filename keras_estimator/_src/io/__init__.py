"""Input functions built from in-memory data (`numpy_input_fn`, `pandas_input_fn`)."""
