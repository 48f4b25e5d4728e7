"""Keys and tokens stay out of the model's reach: out of the tools' environment and output.

A tool result goes into the history, and from there into the session file, the archive, the
transcripts and the model's next request. So a command the model runs must not see
ctxlab's own provider key: ``env`` would print it (an injected prompt only has to ask).
Two layers, because the first cannot be complete:

* :func:`tool_environment` drops every variable whose *name* says it is a key, a token, a
  password or provider configuration, keeping the rest (``PATH``, ``HOME``, ``LANG`` …).
  A variable the person names with ``--pass-env`` is kept anyway.
* A :class:`Redactor` replaces every occurrence of a known secret *value* (the dropped
  variables', the passed ones', the provider's configured key) with ``[redacted NAME]``:
  the command can still find a key in ``~/.bashrc`` or ``/proc/<ctxlab>/environ``.
  :class:`StreamRedactor` does the same over text that arrives in pieces (bash's spool),
  holding back just enough of the end that a value split across two pieces is still caught.

What redaction cannot see: a value transformed (base64, split by the command), or written
by the command itself into a file (``cp ~/.bashrc .``); nothing passes through ctxlab there.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from core.archive.atomic import open_atomic

# Whole families: a provider's variables are its configuration, never a tool's business.
DROPPED_PREFIXES = ("ANTHROPIC_", "OPENAI_", "CLAUDE_", "AZURE_OPENAI_", "GEMINI_",
                    "GOOGLE_API", "MISTRAL_", "COHERE_", "GROQ_", "HUGGING_FACE_")
# A name holding one of these parts (after upper-casing) is taken for a secret.
SECRET_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
                "API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY", "AUTH_KEY")
SECRET_SUFFIXES = ("_KEY", "_PAT", "_PASS", "_PWD")
# Shorter values are too likely to be ordinary words or numbers to replace everywhere.
MIN_SECRET_CHARS = 8
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_secret_name(name: str) -> bool:
    """Whether a variable called ``name`` is kept from the tools by default."""
    upper = name.upper()
    return (upper.startswith(DROPPED_PREFIXES) or upper.endswith(SECRET_SUFFIXES)
            or any(part in upper for part in SECRET_PARTS))


def check_env_name(name: str) -> str:
    """A ``--pass-env`` argument must be a variable name (a typo should not pass silently)."""
    if not ENV_NAME.fullmatch(name):
        raise ValueError(f"--pass-env {name!r}: not an environment variable name")
    return name


def tool_environment(environ: Mapping[str, str], pass_env: Iterable[str] = ()) -> dict[str, str]:
    """``environ`` without its secrets, except the names in ``pass_env``."""
    passed = set(pass_env)
    return {k: v for k, v in environ.items() if k in passed or not is_secret_name(k)}


def marker(name: str) -> str:
    """What stands in a tool output where the value of ``name`` was."""
    return f"[redacted {name}]"


@dataclass(frozen=True)
class Redactor:
    """Replaces known secret values in text; ``values`` maps each value to its name."""

    values: Mapping[str, str] = field(default_factory=dict)
    _pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # longest first: where one secret contains another, the whole of it goes
        ordered = sorted(self.values, key=lambda v: (-len(v), v))
        pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        object.__setattr__(self, "_pattern", pattern)

    @classmethod
    def of(cls, named: Iterable[tuple[str, str | None]]) -> Redactor:
        """From ``(name, value)`` pairs; short, empty or missing values are skipped, and a
        value shared by several names is named after the first."""
        values: dict[str, str] = {}
        for name, value in named:
            if isinstance(value, str) and len(value) >= MIN_SECRET_CHARS:
                values.setdefault(value, name)
        return cls(values)

    @property
    def longest(self) -> int:
        return max(map(len, self.values), default=0)

    def spans(self, text: str) -> list[re.Match[str]]:
        return list(self._pattern.finditer(text)) if self._pattern is not None else []

    def redact(self, text: str) -> str:
        return self.redact_counted(text)[0]

    def redact_counted(self, text: str) -> tuple[str, int]:
        """The redacted text and how many values were replaced."""
        if self._pattern is None:
            return text, 0
        return self._pattern.subn(lambda m: marker(self.values[m.group(0)]), text)

    def redact_value(self, value: Any) -> Any:
        """The same through the strings of a JSON-like value (a tool outcome's ``meta``)."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {k: self.redact_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.redact_value(v) for v in value)
        return value


@dataclass
class StreamRedactor:
    """Redacts text fed in pieces: what :meth:`feed` returns never holds a whole secret,
    and all of it together with :meth:`flush` is the redaction of the whole text.

    It holds back the last ``longest - 1`` chars, since a secret may start there and end in
    the next piece; a secret that starts before that point lies wholly in what it has."""

    redactor: Redactor
    replaced: int = 0  # how many values were replaced so far
    _held: str = ""

    def feed(self, text: str) -> str:
        if not self.redactor.values:
            return text
        buffer = self._held + text
        cut = max(len(buffer) - (self.redactor.longest - 1), 0)
        end = cut
        for match in self.redactor.spans(buffer):
            if match.start() >= cut:
                break
            end = max(end, match.end())
        self._held = buffer[end:]
        return self._redact(buffer[:end])

    def flush(self) -> str:
        rest, self._held = self._held, ""
        return self._redact(rest)

    def _redact(self, text: str) -> str:
        out, count = self.redactor.redact_counted(text)
        self.replaced += count
        return out


def redact_file(path: Path, redactor: Redactor, chunk: int = 1 << 20) -> int:
    """Replace the secrets in a text file ctxlab is about to keep; how many there were.

    One reading pass finds out; only a file that holds a secret is rewritten, by the one
    atomic writer (:func:`core.archive.atomic.open_atomic`, durable like any file a tool
    writes), so a clean file is never touched."""
    if not redactor.values or not _redacted_copy(path, redactor, None, chunk):
        return 0
    with open_atomic(path, durable=True) as file:
        with open(file.fd, "w", encoding="utf-8", errors="surrogateescape", newline="",
                  closefd=False) as out:
            count = _redacted_copy(path, redactor, out, chunk)
        file.commit(path)
    return count


def _redacted_copy(path: Path, redactor: Redactor, out: IO[str] | None, chunk: int) -> int:
    stream = StreamRedactor(redactor)
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as source:
        while text := source.read(chunk):
            kept = stream.feed(text)
            if out is not None:
                out.write(kept)
        rest = stream.flush()
        if out is not None:
            out.write(rest)
    return stream.replaced


@dataclass(frozen=True)
class ToolSecrets:
    """What one run's tools are given, and what is redacted from what they return."""

    env: Mapping[str, str]
    redactor: Redactor

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None, *,
                     pass_env: Iterable[str] = (),
                     extra: Iterable[tuple[str, str | None]] = ()) -> ToolSecrets:
        """``environ`` (default: ctxlab's own) filtered; every secret-named value redacted,
        passed ones too (passing a token lets a command use it, not print it into the
        history); ``extra`` adds values held elsewhere, such as a provider's own key."""
        environ = os.environ if environ is None else environ
        passed = tuple(pass_env)
        named = [(k, v) for k, v in sorted(environ.items()) if is_secret_name(k)]
        return cls(env=tool_environment(environ, passed),
                   redactor=Redactor.of([*extra, *named]))

    @contextlib.contextmanager
    def applied(self) -> Iterator[ToolSecrets]:
        """Tool calls made inside use these settings (see :func:`current`)."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)


# The run's settings reach ``bash`` through the context of the awaiting task rather than
# through the tool runner's call signature: every caller that never heard of them (a test,
# ``compare``) still gets the safe default, and two sessions in one process keep their own.
_CURRENT: ContextVar[ToolSecrets | None] = ContextVar("ctxlab_tool_secrets", default=None)


def current() -> ToolSecrets:
    """The settings of the run making this call, else the default for ctxlab's environment."""
    return _CURRENT.get() or ToolSecrets.from_environ()
