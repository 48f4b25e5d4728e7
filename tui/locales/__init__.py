"""The message catalogs, one module per language: ``MESSAGES`` maps message id → text.

English is the reference (every id is there); a test checks that each language has exactly
the same ids and the same ``{fields}``, so a missing translation fails the suite, not a room.
"""

from __future__ import annotations

from tui.locales import en, zh

CATALOGS: dict[str, dict[str, str]] = {"en": en.MESSAGES, "zh": zh.MESSAGES}
