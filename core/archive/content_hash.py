"""The hash that names an archived file and vouches for its bytes: BLAKE3 (SHA-256 still read).

A fresh tool result is hashed before any pointer to it is sent: its file's name carries the
hash (two contents never share a name) and the manifest records it (trust is checked against
it). So the hash sits on the critical path of every ``prepare()`` that saves a large result.
SHA-256 costs more than writing the same bytes; BLAKE3 is several times faster on one core
(docs/PERFORMANCE.md, "Compaction") and spreads over several, and is just as much a
cryptographic hash: neither an accident nor a crafted file can match a recorded digest.

Manifest lines written before BLAKE3 carry ``"sha256"``; they are still checked with SHA-256,
so an older workspace's files stay trusted. Pointer texts (a few kB each) keep SHA-256: their
cost is noise, and the log's existing pointer lines stay valid.
"""

from __future__ import annotations

import codecs
import hashlib
from pathlib import Path
from typing import Any

from blake3 import blake3

CONTENT = "blake3"  # what every new file entry records
ALGORITHMS = ("blake3", "sha256")  # what a manifest line may carry, newest first
MULTI_THREAD_BYTES = 8 << 30  # from this size BLAKE3 hashes on every core
_CHUNK = 1 << 20


def new_hasher(algorithm: str = CONTENT, size: int = 0) -> Any:
    """A hashlib-style object (``update``, ``hexdigest``) for ``algorithm``."""
    if algorithm == "sha256":
        return hashlib.sha256()
    if algorithm != "blake3":
        raise ValueError(f"unknown hash algorithm {algorithm!r}")
    if size >= MULTI_THREAD_BYTES:
        return blake3(max_threads=blake3.AUTO)
    return blake3()


def digest_bytes(data: bytes, algorithm: str = CONTENT) -> str:
    hasher = new_hasher(algorithm, len(data))
    hasher.update(data)
    return hasher.hexdigest()


def digest_text(text: str, algorithm: str = CONTENT) -> str:
    """The digest of ``text`` as it is on disk: its UTF-8 bytes, lone surrogates kept."""
    return digest_bytes(text.encode("utf-8", "surrogatepass"), algorithm)


def digest_file(path: Path, algorithm: str) -> str:
    hasher = new_hasher(algorithm)
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            hasher.update(chunk)
    return hasher.hexdigest()


def digest_and_chars(path: Path) -> tuple[str, int]:
    """The content digest of a UTF-8 file and its length in characters, in one pass."""
    hasher = new_hasher()
    decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")
    chars = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            hasher.update(chunk)
            chars += len(decoder.decode(chunk))
    chars += len(decoder.decode(b"", True))
    return hasher.hexdigest(), chars
