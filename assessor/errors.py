"""Errors that reach the user. Each message names the file or key at fault and the next step."""

from __future__ import annotations


class AssessorError(Exception):
    """Base class for every error the CLI turns into a one-line message.

    `exit_code` is 2 (bad input or usage) unless a subclass says otherwise.
    """

    exit_code = 2


class RunNotFoundError(AssessorError):
    """The run path does not exist or is not readable."""


class NoMetricsError(AssessorError):
    """Nothing readable was found in the run directory."""


class UnreadableSourceError(AssessorError):
    """A single file could not be read at all (raised by readers, caught by the loader)."""


class ConfigError(AssessorError):
    """A judge name, option or key is missing or wrong."""


class JudgeError(AssessorError):
    """A judge could not produce a valid verdict (after its retries): exit code 1."""

    exit_code = 1


class JudgeUnavailableError(JudgeError):
    """An LLM judge's API could not be reached (refused connection, timeout, 5xx) after its retries.

    `--judge auto` falls back to the rules judge on this error; a provider named explicitly fails with it.
    """
