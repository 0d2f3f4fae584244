"""Tests of tracekit.analyze."""
