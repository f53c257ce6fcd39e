"""Tests of keras_estimator/_src/feature_column/."""
