"""The documented errors of tracekit: every exception class of the package is defined here.

Every error tracekit raises on purpose derives from ``TracekitError`` and says what was wrong
and where (file, line, field), so that a person knows what to fix::

    TracekitError
     ├── TraceFormatError      a trace file that cannot be read as a whole (bad header, newer format)
     │    └── NotATraceError   a file that is not a trace at all (names the import that reads it)
     ├── CaseError             a case file that breaks the schema (file, line, field)
     ├── DateError             a relative date phrase that cannot be resolved (also a ValueError)
     ├── ImportFormatError     a transcript an importer cannot read
     ├── ScriptError           a fake-upstream script that cannot be used
     ├── ReplayMiss            a request with no matching recording
     ├── ModelClientError      a model name no client can serve (tracekit.clients); the demo's
     │                         PolicyError (tracekit_demo) derives from it
     ├── RunSetupError         a run that cannot start as configured (no API key, ...)
     ├── DetectorOptionError   a detector option or preset that names nothing, or a wrong-typed value
     ├── ResultsError          an analyze results JSON that cannot be read (file, field)
     ├── StorageError          a URL that cannot be used (bad scheme, no credentials, no such bucket)
     ├── EngineError           an analysis engine that cannot start (Ray missing, cluster unreachable)
     ├── JudgeError            judge settings that cannot work (no model, online)
     ├── JudgeCallError        a judge request that got no answer (API error, replay miss)
     ├── LabelsError           a human-labels file that cannot be read (file, line)
     ├── GuardConfigError      a guard file that cannot be used (file, line, field)
     ├── PolicyError           a policy file that cannot be used (file, line, field)
     │    └── ExpressionError       an expression of a policy that does not parse (its position)
     ├── ExpectedActionsError  an expected-actions file that cannot be used (file, entry, field)
     ├── OptionsError          a command's options that cannot be used (tracekit.application)
     ├── PluginError           an installed extension (entry point) that cannot be loaded or used
     ├── ProxySetupError       a proxy that cannot start as configured (bind address, recordings)
     ├── CaseVerdictFailed     the pytest plugin: a recording of the case got a failing verdict
     ├── BodyRefused           an upstream body the proxy does not pass on (answered with a 502):
     │    ├── ResponseTooLarge      larger than --max-response-bytes once decoded (a gzip bomb)
     │    └── UndecodableResponse   in an encoding the proxy did not ask for, or not valid in it
     └── InputError            the CLI: bad usage or unreadable input; defined in ``tracekit.cli.exits``
                               with the exit statuses, as it is a click.ClickException too (printed as
                               ``Error: ...``, exit status 2): click stays in ``tracekit/cli``

Problems that only affect one line of a trace file are not raised: the reader reports them as
``ReadProblem`` values and keeps reading.
"""

from __future__ import annotations


class TracekitError(Exception):
    """Base class of every error tracekit raises on purpose."""


class TraceFormatError(TracekitError):
    """A trace file that cannot be read at all: missing header, or a format newer than this tracekit."""


class NotATraceError(TraceFormatError):
    """A file given as a trace that is not one (empty, no line a record, another JSON document such as a
    tau-bench results file); the message says what it is and which ``tracekit import`` reads it."""


class CaseError(TracekitError):
    """A case file that is not valid; the message names the file, the line and the field."""


class DateError(TracekitError, ValueError):
    """A date phrase that cannot be resolved (unknown wording, or no ``context.now`` to resolve it from)."""


class ImportFormatError(TracekitError):
    """A transcript that an importer cannot read; the message names the file and the position."""


class ReplayMiss(TracekitError):
    """A request that matches no recording; the message names the nearest one and the difference."""


class ScriptError(TracekitError):
    """A fake-upstream script that cannot be used; the message names the file, the entry (and line) and the field."""


class ModelClientError(TracekitError):
    """A model name that resolves to no usable client: a registered client that refuses the name, or an
    entry point of ``tracekit.model_clients`` that cannot be loaded; the message names the model and what to do."""


class RunSetupError(TracekitError):
    """A run that cannot start as configured (no API key, a model that cannot run as an agent, ...)."""


class DetectorOptionError(TracekitError):
    """A detector option that names no detector or option, or has a value of the wrong type."""


class ResultsError(TracekitError):
    """An analyze results JSON (or a baseline) that cannot be read; the message names the file and the field."""


class StorageError(TracekitError):
    """A path or URL (``s3://``, ``gs://``, any fsspec URL) that cannot be read or written: a scheme no
    filesystem serves, a filesystem library not installed, missing credentials, no such bucket or object."""


class EngineError(TracekitError):
    """An analysis engine that cannot run: its library is not installed, or its cluster cannot be reached."""


class JudgeError(TracekitError):
    """Judge settings that cannot work (e.g. no model, online)."""


class JudgeCallError(TracekitError):
    """A judge request that got no answer (API error, connection failure, replay miss)."""


class LabelsError(TracekitError):
    """A labels or results file that cannot be read; the message names the file and line."""


class GuardConfigError(TracekitError):
    """A guard file that cannot be used (the message names the file, the line and the field)."""


class PolicyError(TracekitError):
    """A policy file that cannot be read or does not fit the ``Policy`` model (``tracekit.diagnose``)."""


class ExpressionError(PolicyError):
    """An expression of a policy file that does not parse (the message names the position)."""


class ExpectedActionsError(TracekitError):
    """An ``--expected-actions`` file that cannot be read or holds a malformed call (``tracekit.diagnose``)."""


class OptionsError(TracekitError):
    """Options a command was given that cannot be used: a case the library lacks, a judge model that cannot
    judge, a path that is not there (raised by ``tracekit.application``; the CLI exits 2 with the message)."""


class PluginError(TracekitError):
    """An installed extension that cannot be used: its entry point does not import, or it is not what its
    group takes (a detector, an importer, a provider); the message names the entry point and its package."""


class ProxySetupError(TracekitError):
    """A proxy that cannot start as configured (a bind address it may not use, recordings it cannot read)."""


class CaseVerdictFailed(TracekitError):
    """A recording of the case got a failing verdict; the message lists the runs and their failed checks."""


class EventStreamError(TracekitError, ValueError):
    """Bytes that are not a valid AWS event-stream message (a length or CRC that does not match)."""


class BodyRefused(TracekitError):
    """An upstream body the proxy does not pass on (the client gets a 502 with the message)."""

    failure = "refused"
    """How the exchange's transport failure is recorded."""


class ResponseTooLarge(BodyRefused):
    """An upstream body larger than the limit once decoded (``--max-response-bytes``)."""

    failure = "too_large"


class UndecodableResponse(BodyRefused):
    """An upstream body in an encoding the proxy did not ask for, or not valid in it."""

    failure = "undecodable"



class UnfollowedResults(Exception):
    """Inside ``tracekit.results.stream``: the entry-by-entry scanner cannot follow a results file, which is
    then read whole instead (that read names what is wrong). Never reaches a caller."""
