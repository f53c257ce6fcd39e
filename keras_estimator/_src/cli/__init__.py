"""The `keras-estimator` console command: `run`, `check` and `inspect`."""
