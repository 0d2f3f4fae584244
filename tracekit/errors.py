"""The documented errors of tracekit.

Every error tracekit raises on purpose derives from ``TracekitError`` and says what was wrong
and where (file, line, field), so that a person knows what to fix::

    TracekitError
     ├── TraceFormatError      a trace file that cannot be read as a whole (no header, newer format)
     ├── CaseError             a case file that breaks the schema (file, line, field)
     ├── ImportFormatError     a transcript an importer cannot read
     ├── ScriptError           a fake-upstream script that cannot be used
     ├── ModelClientError      a model name no client can serve (tracekit.clients)
     ├── ResultsError          an analyze results JSON that cannot be read (file, field)
     └── ReplayMiss            a request with no matching recording

Problems that only affect one line of a trace file are not raised: the reader reports them as
``ReadProblem`` values and keeps reading.
"""

from __future__ import annotations


class TracekitError(Exception):
    """Base class of every error tracekit raises on purpose."""


class TraceFormatError(TracekitError):
    """A trace file that cannot be read at all: missing header, or a format newer than this tracekit."""


class CaseError(TracekitError):
    """A case file that is not valid; the message names the file, the line and the field."""


class ImportFormatError(TracekitError):
    """A transcript that an importer cannot read; the message names the file and the position."""


class ReplayMiss(TracekitError):
    """A request that matches no recording; the message names the nearest one and the difference."""


class ScriptError(TracekitError):
    """A fake-upstream script that cannot be used; the message names the file, the entry (and line) and the field."""


class ModelClientError(TracekitError):
    """A model name that resolves to no usable client: a registered client that refuses the name, or an
    entry point of ``tracekit.model_clients`` that cannot be loaded; the message names the model and what to do."""


class ResultsError(TracekitError):
    """An analyze results JSON (or a baseline) that cannot be read; the message names the file and the field."""
