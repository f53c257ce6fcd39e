"""Tracing a model_fn into Keras and running it: the variable store, the model wrapper,
the fused and fetching steps, the one training loop, and the dispatch of hooks and callbacks.
"""
