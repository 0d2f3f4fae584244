"""Exports of traces to other tools' formats: OpenTelemetry OTLP JSON (GenAI semantic conventions)."""

from tracekit.export.otel import SEMCONV_VERSION, otlp_document, trace_spans

__all__ = ["SEMCONV_VERSION", "otlp_document", "trace_spans"]
