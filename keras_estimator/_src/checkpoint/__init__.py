"""What a model_dir holds: checkpoints (name- and object-based), warm starts, the
evaluation event files read back, and the lock on the directory.
"""
