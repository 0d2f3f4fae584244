"""The trajectory diff of two analyses (``tracekit diff``): pairs, call alignment, verdict and score changes."""

from tracekit.diff.align import AlignedCall, align_calls, canonical
from tracekit.diff.pairs import CHANGED, Diff, Pair, PairKey, Sides, diff_results, natural_key, outcome_result

__all__ = ["CHANGED", "AlignedCall", "Diff", "Pair", "PairKey", "Sides", "align_calls", "canonical", "diff_results",
           "natural_key", "outcome_result"]
