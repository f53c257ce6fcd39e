"""`train_and_evaluate`: specs, the evaluation loop beside training, cluster roles.
"""
