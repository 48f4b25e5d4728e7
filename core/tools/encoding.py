"""Text a tool returns is valid Unicode; text it writes is valid UTF-8.

A file name whose bytes are not UTF-8 (``caf\\xff.txt`` from a Latin-1 checkout) reaches
Python as a *lone surrogate* (``caf\\udcff.txt``, the ``surrogateescape`` convention). Such a
string cannot be encoded as UTF-8, so echoed into a ``tool_result`` it broke the next API
request, and the session with it. Tools therefore show every such byte as a visible
``\\xNN`` escape (:func:`shown`) and accept that spelling back (:func:`unescaped`), so the
model can still read, edit and list the file. Only bytes 0x80-0xFF are ever escaped (an
ASCII byte is always valid UTF-8), which keeps a plain name containing ``\\x41`` literal. A
surrogate that stands for no byte (``\\ud800`` sent by the model itself) can name no file;
it is shown as ``\\ud800``.

Writing is the other direction: a lone surrogate in text the model wants written has no
UTF-8 form. It used to become ``?`` while the tool reported success; :func:`utf8` refuses
it, naming the character and where it is.
"""

from __future__ import annotations

import os
import re
from typing import Any

# Any surrogate code point: the only characters a Python str holds that UTF-8 cannot.
_SURROGATE = re.compile("[\ud800-\udfff]")
# The escape :func:`shown` writes for one undecodable byte.
_BYTE_ESCAPE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def shown(text: str) -> str:
    """``text`` with every surrogate written as a visible escape: always encodable.

    Every tool result passes here on the event loop, and a read returns megabytes: an
    ASCII string (CPython knows it is one without looking) holds no surrogate, and a
    string that encodes holds none either; only one that fails is searched and rewritten.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(_escape, text)
    return text


def shown_value(value: Any) -> Any:
    """:func:`shown` for a string, and for the strings in a (shallow) list or dict of meta."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, list | tuple):
        return type(value)(shown(v) if isinstance(v, str) else v for v in value)
    if isinstance(value, dict):
        return {shown(str(k)): shown(v) if isinstance(v, str) else v for k, v in value.items()}
    return value


def has_byte_escape(text: str) -> bool:
    return _BYTE_ESCAPE.search(text) is not None


def unescaped(text: str) -> str:
    """The file-system spelling of a name :func:`shown` displayed: ``\\xff`` → the raw byte."""
    return _BYTE_ESCAPE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), text)


def fs_encodable(text: str) -> bool:
    """Whether ``text`` can name a file at all (a surrogate that stands for no byte cannot)."""
    try:
        os.fsencode(text)
    except UnicodeEncodeError:
        return False
    return True


class NotEncodable(ValueError):
    """Text with a character UTF-8 cannot hold; the message says which and where."""


def utf8(text: str, field: str) -> bytes:
    """``text`` as UTF-8, or :class:`NotEncodable` naming the first lone surrogate."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        char = shown(text[exc.start])
        raise NotEncodable(
            f"{field} holds a lone surrogate ({char}) at character {exc.start}, which UTF-8 "
            "cannot hold; write the character it stands for, or leave it out"
        ) from None
