"""ctxlab's engine: context compaction (s08), long-term memory (s09) and the agent loop.

Nothing in this package imports Textual: the UI consumes :mod:`core.events` only.
"""

__version__ = "0.1.0"
