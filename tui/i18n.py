"""The workbench's words in more than one language: a catalog per language and ``t()``.

A room that reads Chinese should see a Chinese workbench, and the course's Chinese edition
uses the same stage names, so only prose changes: labels, notices, help, buttons. Every
piece of UI text is a *message id* looked up in :mod:`tui.locales` (one plain dict per
language, so adding a language is one file and no build step); stage names such as
``snip_compact`` are identifiers and are never translated.

The language is chosen once, when the app starts (:func:`set_language`), from ``--lang`` or
the locale (:func:`detect_language`). Texts are looked up when a widget draws, not at import,
so the same process can run an English and a Chinese app one after the other (the tests do).

This module imports neither Textual nor Rich: ``ctxlab --help`` must stay fast.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tui.locales import CATALOGS

LANGUAGES = tuple(CATALOGS)  # ("en", "zh")
DEFAULT_LANGUAGE = "en"
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")  # POSIX order: the first set one wins

_active = DEFAULT_LANGUAGE


def set_language(lang: str) -> None:
    """Make ``lang`` the language of every text looked up from now on."""
    global _active
    if lang not in CATALOGS:
        raise ValueError(f"unknown language {lang!r}; one of {', '.join(LANGUAGES)}")
    _active = lang


def language() -> str:
    return _active


def detect_language(environ: Mapping[str, str] | None = None) -> str:
    """``zh`` when the locale in charge of messages is Chinese (``zh_CN.UTF-8``…), else en.

    The variables are read in POSIX precedence, so ``LC_ALL=C`` with ``LANG=zh_CN`` is
    English, as every other program on that machine would be.
    """
    env = os.environ if environ is None else environ
    for name in LOCALE_VARIABLES:
        value = env.get(name, "").strip()
        if value:
            return "zh" if value.lower().startswith("zh") else DEFAULT_LANGUAGE
    return DEFAULT_LANGUAGE


def t(key: str, /, **fmt: Any) -> str:
    """The text of ``key`` in the active language (English, then the id, as fallbacks).

    ``fmt`` fills ``{name}`` fields with ``str.format`` rules, so ``{n:,}`` works. A count
    of exactly one picks the id's singular form, ``key.one``, when the catalog has one
    ("1 message", not "1 messages"); a language without plural forms repeats the text.
    """
    if fmt.get("n") == 1 and f"{key}.one" in CATALOGS[DEFAULT_LANGUAGE]:
        key = f"{key}.one"
    text = CATALOGS[_active].get(key)
    if text is None:
        text = CATALOGS[DEFAULT_LANGUAGE].get(key, key)
    return text.format(**fmt) if fmt else text


def has(key: str) -> bool:
    return key in CATALOGS[DEFAULT_LANGUAGE]


def localize_bindings(node: Any) -> None:
    """Translate the descriptions (and tooltips) of ``node``'s key bindings in place.

    Textual copies a class's ``BINDINGS`` into each instance when it is created, and the
    footer, the keys panel and the palette read them from there; so classes write a message
    id as the description and call this from ``__init__``, after ``super().__init__()``.
    Bindings whose description is not a message id (Textual's own) are left alone.
    """
    table = node._bindings.key_to_bindings
    for key, bindings in table.items():
        table[key] = [
            replace(b, description=t(b.description),
                    tooltip=t(b.tooltip) if has(b.tooltip) else b.tooltip)
            if has(b.description) else b
            for b in bindings
        ]
