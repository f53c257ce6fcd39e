"""The implementation, grouped by concept; the public modules re-export from here.

See docs/architecture.md for the folders and the one-way rule of their imports.
"""
