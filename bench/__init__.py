"""Plansight's benchmarks: `python -m bench` (or `make bench`) runs them and prints one table.

Not part of the test run. Every figure is a ratio or a percentile measured side by side in one
run, because the machines this runs on are small and shared (2 cores): see bench/RESULTS.md.
"""
