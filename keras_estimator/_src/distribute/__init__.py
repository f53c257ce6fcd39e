"""Facts about strategies and clusters the loop needs: multi-worker agreement, TPU
checks, preemption signals.
"""
