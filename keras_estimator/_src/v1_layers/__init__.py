"""`tf.compat.v1.layers`: the TF1 layer classes and functions, on Keras 3 layers.
"""
