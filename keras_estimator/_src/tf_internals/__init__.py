"""Every touch of private TensorFlow and Keras state, each with the version it was checked on.

One module per topic; each names the private symbols it relies on in its
`TOUCHES` tuple, which `tests/tf_internals/test_tf_internals.py` checks still
exist.
"""
