"""Parameter-server clusters of separate processes on 127.0.0.1, for tests."""
