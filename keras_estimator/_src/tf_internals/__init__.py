"""Every touch of private TensorFlow and Keras state, each with the version it was checked on.
"""
