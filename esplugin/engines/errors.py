"""Errors a user can act on; every message says what to do next."""


class SiraSeekEngineError(RuntimeError):
    """A cluster problem explained in plain words (never carries credentials)."""


class WrongClientError(SiraSeekEngineError):
    """The installed Python client cannot talk to this server's major version."""


class NodeStartError(SiraSeekEngineError):
    """A local node did not come up; the message carries the tail of its log."""
