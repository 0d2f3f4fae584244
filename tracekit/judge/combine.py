"""The combined verdict of a case scored "auto + LLM-judge" lives in ``tracekit.analyze.combine`` (analyze
decides verdicts); its names stay importable from here."""

from tracekit.analyze.combine import UNDECIDED, combine, combined_verdict, stricter

__all__ = ["UNDECIDED", "combine", "combined_verdict", "stricter"]
