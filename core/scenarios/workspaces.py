"""Sample workspaces for the bundled scenarios, generated deterministically.

Every file has a known size and the same bytes on every machine (seeded text, no clock), so
a scenario fires the same stages everywhere and the tests can count on it. Generators write
into an empty directory; ``ctxlab demo`` always uses a fresh temporary copy.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

WORDS = [
    "token", "session", "user", "verify", "expire", "refresh", "secret", "hash", "salt",
    "claim", "scope", "issuer", "audience", "login", "logout", "cookie", "header", "bearer",
    "nonce", "rotate", "revoke", "grant", "client", "store", "cache", "retry",
]


def code_text(seed: str, size: int, kind: str = "py") -> str:
    """Plausible source text of exactly ``size`` characters."""
    rng = random.Random(seed)
    lines: list[str] = [f"# {seed} — generated sample ({size} chars)\n"]
    total = len(lines[0])
    n = 0
    while total < size:
        n += 1
        a, b, c = rng.sample(WORDS, 3)
        if kind == "log":
            line = (f"2026-11-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:{(n * 7) % 60:02d}Z "
                    f"INFO auth.{a} {b}={rng.randrange(10**6)} {c} ok\n")
        elif n % 6 == 1:
            line = f"\ndef {a}_{b}(request, {c}=None):\n"
        elif n % 6 == 2:
            line = f'    """{a.title()} the {b} for a {c}."""\n'
        else:
            line = f"    {a} = {b}.{c}({rng.randrange(1000)})\n"
        lines.append(line)
        total += len(line)
    text = "".join(lines)
    return text[:size - 1] + "\n" if size > 0 else ""


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def refactor_auth(root: Path) -> None:
    """An auth package, its tests, a big legacy module and a very large server log."""
    _write(root, {
        "README.md": "# shop-auth\n\nSession and token handling for the shop backend.\n",
        "auth/__init__.py": code_text("auth/__init__", 600),
        "auth/session.py": code_text("auth/session", 6_000),
        "auth/tokens.py": code_text("auth/tokens", 9_000),
        "auth/passwords.py": code_text("auth/passwords", 4_000),
        "auth/legacy_login.py": code_text("auth/legacy_login", 36_000),
        "tests/test_session.py": code_text("tests/test_session", 3_000),
        "tests/test_tokens.py": code_text("tests/test_tokens", 3_000),
        "logs/server.log": code_text("logs/server", 240_000, "log"),
        **{f"auth/migrations/{n:04d}_tokens.py": code_text(f"migration {n}", 2_500)
           for n in range(1, 21)},
    })


def big_log(root: Path) -> None:
    """One enormous output: a 1.2 MB log."""
    _write(root, {
        "README.md": "# ingest\n\nThe nightly ingest job.\n",
        "logs/ingest.log": code_text("logs/ingest", 1_200_000, "log"),
        "ingest/job.py": code_text("ingest/job", 5_000),
    })


def long_chat(root: Path) -> None:
    """A small project for many short turns."""
    _write(root, {
        "README.md": "# notes\n\nA tiny note-taking CLI.\n",
        "notes/cli.py": code_text("notes/cli", 3_000),
        "notes/store.py": code_text("notes/store", 2_500),
    })


def two_sessions(root: Path) -> None:
    """A project whose conventions are learned in session 1 and recalled in session 2."""
    _write(root, {
        "README.md": "# billing\n\nInvoices and payments.\n",
        "billing/invoice.py": code_text("billing/invoice", 4_000),
        "billing/payment.py": code_text("billing/payment", 4_000),
    })


MIGRATION_NOUNS = ("orders", "invoices", "customers", "payments", "refunds", "shipments",
                   "carts", "coupons", "reviews", "stock", "prices", "taxes")
MIGRATION_RULES = """# Project rules

- Migrated modules keep their public names; add a `# migrated` header line.
- legacy/ is the source of the migration: read it, never edit it.
- One module per request, in numeric order.
"""


def migration_names(n: int) -> tuple[str, str, str]:
    """The three public functions of module ``n`` (1-based), kept by the migration."""
    noun = MIGRATION_NOUNS[(n - 1) % len(MIGRATION_NOUNS)]
    return f"load_{noun}", f"save_{noun}", f"validate_{noun}"


def legacy_module(n: int, size: int = 2_400) -> str:
    """``legacy/mod_NN.py``: three public functions, then seeded filler up to ``size``."""
    load, save, validate = migration_names(n)
    noun = load.removeprefix("load_")
    head = (f'"""Legacy module {n:02d}: {noun} (Python 2 era)."""\n\n'
            f"def {load}(db, key):\n    return db.get(key)\n\n\n"
            f"def {save}(db, key, value):\n    db[key] = value\n\n\n"
            f"def {validate}(value):\n    return value is not None\n\n\n")
    return head + code_text(f"legacy/mod_{n:02d}", max(size - len(head), 80))


def long_migration(root: Path) -> None:
    """Twelve legacy modules to migrate one per request, and a CTXLAB.md with the rules."""
    _write(root, {
        "README.md": "# shop-core\n\nThe shop's data layer, being migrated from legacy/ "
                     "to app/.\n",
        "CTXLAB.md": MIGRATION_RULES,
        "app/__init__.py": '"""The migrated data layer."""\n',
        **{f"legacy/mod_{n:02d}.py": legacy_module(n) for n in range(1, 13)},
    })


GENERATORS: dict[str, Callable[[Path], None]] = {
    "refactor_auth": refactor_auth,
    "big_log": big_log,
    "long_chat": long_chat,
    "two_sessions": two_sessions,
    "long_migration": long_migration,
}


def generate(name: str, root: Path) -> Path:
    """Fill ``root`` with the named sample workspace."""
    if name not in GENERATORS:
        raise KeyError(f"unknown workspace generator {name!r}; one of {', '.join(GENERATORS)}")
    root.mkdir(parents=True, exist_ok=True)
    GENERATORS[name](root)
    return root
