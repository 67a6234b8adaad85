"""Plan items run in parallel by workers, each a session of its own in a sandboxed copy of the
workspace (protocol version 4); see workers.py."""
