"""What everything else uses: the API's data types (ModeKeys, EstimatorSpec, RunConfig,
SessionRunHook, export outputs, serving receivers) and small helpers. Imports no other folder
but tf_internals.
"""
