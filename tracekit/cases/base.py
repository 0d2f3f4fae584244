"""Shared ground of the case models: the strict base model, case ids, dimensions and sections.

Every case model forbids unknown fields, so that a typo in a case file is an error that names the field
instead of a check that silently never runs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Dimension = Literal["B2", "Q3", "Q1", "C4", "TT"]

#: Case ids follow the seeds: ``<dimension>-<category>-<nn>`` (``B2-PC-nn``, ``Q3-ST-nn``, ...), and ``TT-nn``
#: for the article's traps.
CASE_ID_PATTERN = r"^(?:(?P<dim>B2|Q3|Q1|C4)-(?P<cat>[A-Z]{2})-\d{2}|TT-\d{2})$"

#: Dimensions and their section codes in seed order (DESIGN.md "Contracts").
SECTION_ORDER: dict[str, tuple[str, ...]] = {
    "B2": ("TS", "PC", "TC", "FR", "RC", "MM"),
    "Q3": ("ST", "TC", "RC", "OR", "OE"),
    "Q1": ("TF", "KB", "RF", "UE", "CC", "MM"),
    "C4": ("LD", "DR", "PA", "AR"),
    "TT": ("TT",),
}

#: The pseudo tool name seed 003 uses for "answer without a tool".
NO_TOOL = "none"


class StrictModel(BaseModel):
    """Base of every case model: unknown fields are errors; fields may be given by name or alias."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
