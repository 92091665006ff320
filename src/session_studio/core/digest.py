"""A cryptographic hash that does not load OpenSSL: BLAKE2b with a 32-byte digest.

What the core hashes to notice change (a session file's first and last 64 KiB, the index cache's
keys and probes) needs a hash no edit collides with by chance, not a particular one. ``import
hashlib`` loads OpenSSL's libcrypto (~6 ms of every command's start, a twentieth of a cached
`plan`); CPython's own BLAKE2 (``_blake2``, the module ``hashlib.blake2b`` comes from) loads nothing.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # a Python without the built-in module: hashlib's (with OpenSSL) then
    from hashlib import blake2b

__all__ = ["DIGEST_SIZE", "new_hash"]

DIGEST_SIZE = 32


def new_hash(data: bytes = b"") -> blake2b:
    """A new hash object (``update``, ``hexdigest``) over ``data`` so far."""
    return blake2b(data, digest_size=DIGEST_SIZE)
