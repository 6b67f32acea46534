"""The canonical JSON and the SHA-256 content address of SPEC section 4."""

from __future__ import annotations

from collections.abc import Mapping
import hashlib
import json
import re

__all__ = ['SHA256_HEX_PATTERN', 'canonical_json', 'content_address', 'is_sha256_hex']

#: A content address: 64 lowercase hexadecimal digits.
SHA256_HEX_PATTERN = re.compile(r'[0-9a-f]{64}')


def canonical_json(obj: object) -> str:
    """Return the canonical JSON text of `obj` (sorted keys, no spaces, UTF-8 kept, NaN allowed).

    This is exactly the serialisation SPEC section 4 names; it must never change, because every
    content address in every recorded bag depends on it.
    """
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(',', ':'))


def content_address(obj: Mapping[str, object]) -> str:
    """Return H(obj): the lowercase hex SHA-256 of the UTF-8 bytes of its canonical JSON."""
    return hashlib.sha256(canonical_json(obj).encode('utf-8')).hexdigest()


def is_sha256_hex(value: object) -> bool:
    """Return True when `value` is a string of exactly 64 lowercase hexadecimal digits."""
    return isinstance(value, str) and SHA256_HEX_PATTERN.fullmatch(value) is not None
