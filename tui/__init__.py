"""ctxlab's workbench (Textual) and command line. Consumes :mod:`core.events` only."""
