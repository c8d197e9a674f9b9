"""tokaudit's exceptions.

Every error a user can cause derives from :class:`TokauditError` and carries a
``hint`` that says how to fix the problem. The CLI turns these, and only these,
into a short message and a non-zero exit; anything else is a bug and keeps its
traceback.
"""

from __future__ import annotations


class TokauditError(Exception):
    """Base class of every error tokaudit reports to a user."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\nHint: {self.hint}"
        return self.message


class ConfigError(TokauditError):
    """A configuration file or option has a bad key or value."""


class DatabaseLockedError(TokauditError):
    """Another process holds the database's write lock."""


class DatabaseVersionError(TokauditError):
    """The database schema is older or newer than this tokaudit expects."""


class UnknownFormatError(TokauditError):
    """A file's log format could not be recognised, or a named format does not exist."""


class NoInputError(TokauditError):
    """No usable log input was found."""

    exit_code = 3
