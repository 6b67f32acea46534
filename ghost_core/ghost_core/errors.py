"""Narrow exception types raised by ghost_core."""

from __future__ import annotations

__all__ = ['ConfigError', 'ContractError', 'GhostError', 'MessageFormatError']


class GhostError(Exception):
    """Base of every error ghost_core raises on purpose."""


class ContractError(GhostError, ValueError):
    """A contract invariant does not hold; the message names the field and the bad value."""


class MessageFormatError(ContractError):
    """A message dict is malformed (missing field, wrong type); the message names the path."""


class ConfigError(GhostError, ValueError):
    """A configuration or parameter value is out of its documented range."""
