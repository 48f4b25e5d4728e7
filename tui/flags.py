"""The contract's threshold flags, defined once for ``run``, ``compact`` and ``demo``."""

from __future__ import annotations

import argparse
from typing import Any

from core.config import Thresholds

THRESHOLD_FLAGS: tuple[tuple[str, str], ...] = (
    ("--context-limit", "context_limit"),
    ("--batch-limit", "batch_limit"),
    ("--large-result", "large_result"),
    ("--keep-recent", "keep_recent"),
    ("--max-messages", "max_messages"),
    ("--reactive-keep", "reactive_keep"),
    ("--summary-input-limit", "summary_input_limit"),
)


def add_threshold_flags(parser: argparse.ArgumentParser) -> None:
    defaults = Thresholds()
    for flag, key in THRESHOLD_FLAGS:
        parser.add_argument(flag, type=int, dest=key, default=None, metavar="N",
                            help=f"default {getattr(defaults, key)}")


def threshold_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Only the flags the user gave: each layer changes just the keys it names."""
    return {key: getattr(args, key) for _, key in THRESHOLD_FLAGS
            if getattr(args, key, None) is not None}
