"""The SessionRunHooks of tf.estimator that need no Estimator: logging, step counting,
NaN checks, checkpoint saving, summaries, profiling.
"""
