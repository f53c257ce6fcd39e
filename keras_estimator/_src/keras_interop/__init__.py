"""Keras models as Estimators (`model_to_estimator`) and model_fns as Keras models.
"""
