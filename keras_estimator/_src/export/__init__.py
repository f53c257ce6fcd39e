"""SavedModel export, and the Exporters that train_and_evaluate calls.
"""
