"""`install()`: tf.estimator programs run unchanged on this package.
"""
