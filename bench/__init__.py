"""Benchmarks of leveldb_log: ``python -m bench`` from the repository root.

harness.py (timing, interleaved rounds, ratios), cases/ (what is measured: crc, write,
read, memory), report.py (tables, targets), suite.py (runs the cases), __main__.py (the
command line). See bench/README.md.
"""
