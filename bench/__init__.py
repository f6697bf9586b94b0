"""Benchmarks: run each with ``python -m bench.<name>``; they print their figures."""
