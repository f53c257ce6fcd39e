"""TPUEstimator and its configuration, running on the Estimator here."""
