"""The version, in one place: the package and the event log header both read it."""

__version__ = "0.1.0"
