"""The Estimator, and what drives one: extenders, early stopping, the in-memory evaluator.
"""
