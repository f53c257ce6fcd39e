"""Heads: what a canned model's logits become in each mode (loss, predictions, metrics, signatures)."""
