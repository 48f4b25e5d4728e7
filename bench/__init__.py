"""Benchmarks: each ``bench_*.py`` module exposes ``run() -> list[dict]`` (rows of ``name``,
``value``, ``unit``, ``target``, ``baseline``, ``ratio``, ``ok``) so one runner can gather them,
and prints its own table when run as a script."""
