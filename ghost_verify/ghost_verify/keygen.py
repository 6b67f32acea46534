"""ghost_keygen: make the Ed25519 key pair that signs run manifests.

    ghost_keygen --output keys/ghost      (writes keys/ghost and keys/ghost.pub)

The private key (PKCS8 PEM, unencrypted, mode 0600) goes to PREFIX, the public key
(SubjectPublicKeyInfo PEM) to PREFIX.pub. Existing files are never overwritten.
Exit codes (docs/cli.md): 0 written; 2 usage error (a file exists, or cannot be written).
"""

from __future__ import annotations

from collections.abc import Sequence
import os
from pathlib import Path
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ghost_bag.manifest import public_key_sha256
from ghost_core.cli import ExitCode, guarded, tool_error, ToolParser

__all__ = ['main']


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Create ``path`` with ``mode`` (O_EXCL: never replace a file) and write ``data``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)  # whatever the umask
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def main(argv: Sequence[str] | None = None) -> int:
    """Write a new key pair; print where and the public key's SHA-256; return the exit code."""
    parser = ToolParser(_PROG, __doc__.split('\n\n')[0], 'ghost_verify')
    parser.add_argument('--output', '-o', required=True, metavar='PREFIX',
                        help='private key path; the public key goes to PREFIX.pub')
    args = parser.parse_args(argv)
    return guarded(_PROG, lambda: _write_pair(args.output))


_PROG = 'ghost_keygen'


def _write_pair(prefix: str) -> int:
    private_path = Path(prefix)
    public_path = Path(f'{prefix}.pub')
    for path in (private_path, public_path):
        if path.exists():
            return tool_error(_PROG, f'{path} exists; refusing to overwrite it',
                              ExitCode.USAGE)
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    try:
        # A missing folder is created (private to the user: it holds a private key).
        private_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _write_new(private_path, private_pem, 0o600)
        try:
            _write_new(public_path, public_pem, 0o644)
        except OSError:
            private_path.unlink()
            raise
    except OSError as err:
        return tool_error(_PROG, f'cannot write {err.filename or prefix}: {err.strerror}',
                          ExitCode.USAGE)
    print(f'private key: {private_path} (keep it secret)\npublic key: {public_path} '
          f'(sha256 {public_key_sha256(key.public_key())})')
    return ExitCode.OK


if __name__ == '__main__':
    sys.exit(main())
