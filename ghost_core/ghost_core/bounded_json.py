"""JSON from a bag, read with a depth limit: deep nesting is a bad value, not an internal fault.

Python's ``json`` parses nesting until the interpreter's recursion limit and then raises
RecursionError, and whatever walks a parsed document recursively fails the same way later.
Every JSON document a verifier reads from a bag (manifest.json, a ConfigurationChange's
configuration) goes through :func:`loads`, which refuses a document nested deeper than
``MAX_JSON_DEPTH`` before parsing it, as a ValueError naming the depth.

Pure: the standard library only.
"""

from __future__ import annotations

import json
import re

__all__ = ['MAX_JSON_DEPTH', 'json_depth', 'loads']

#: The deepest nesting of arrays and objects read (Ghost's own documents nest 4 deep).
MAX_JSON_DEPTH = 64

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r'[\[\]{}]')


def json_depth(text: str) -> int:
    """Return how deep the arrays and objects of a JSON text nest (strings are skipped)."""
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub('""', text)):
        if match.group() in '[{':
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def loads(text: str | bytes) -> object:
    """Parse a JSON text (``json.loads``), refusing one nested deeper than MAX_JSON_DEPTH.

    Raises ValueError (json.JSONDecodeError for a text that is not JSON) in every case the
    text cannot be read, never RecursionError.
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8')
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f'nested {depth} deep, more than the {MAX_JSON_DEPTH} levels read')
    try:
        return json.loads(text)
    except RecursionError as err:  # not reached below MAX_JSON_DEPTH; kept as a guarantee
        raise ValueError('nested too deeply') from err
