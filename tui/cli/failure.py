"""How every command says it failed: one line on stderr, ``ctxlab CMD: message``.

Messages quote names from outside (a planted link's target, a session's ids), which can hold
a newline or a lone surrogate; both are escaped so the line stays one and prints on any
terminal.
"""

from __future__ import annotations

import sys


def one_line(text: str) -> str:
    """``text`` with CR and LF spelt ``\\r``/``\\n`` and what UTF-8 cannot encode escaped."""
    flat = text.replace("\r", "\\r").replace("\n", "\\n")
    return flat.encode("utf-8", "backslashreplace").decode("utf-8")


def fail(prog: str, message: str, code: int) -> int:
    """Print ``prog: message`` as one line on stderr; the exit code, for ``return``."""
    print(f"{prog}: {one_line(message)}", file=sys.stderr)
    return code
