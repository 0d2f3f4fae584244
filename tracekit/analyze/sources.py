"""Which files an analysis reads, and how the results name them, whatever the working directory.

- ``trace_paths``: the trace files of the PATH arguments (files, and folders walked recursively);
  ``iter_trace_paths``: the same names, lazily (a URL prefix listed a page at a time as they are consumed).
- ``SourceNames``: ``traces[].source`` is a file's path relative to the folder that holds the PATH argument
  that found it, so ``tracekit analyze recordings`` from the repository and ``tracekit analyze
  $REPO/recordings`` from anywhere both write ``recordings/flawed/x.jsonl``; ``traces[].trace_file`` is
  where the report finds the file: relative to the folder of the results file (so a report made from the
  results file reads the traces from anywhere), or to the working directory when there is no results file.

Example::

    names = SourceNames.of(["/repo/recordings"], results_dir="/repo/reports/demo")
    names.source("/repo/recordings/flawed/x.jsonl")       # 'recordings/flawed/x.jsonl'
    names.trace_file("/repo/recordings/flawed/x.jsonl")   # '../../recordings/flawed/x.jsonl'

A URL (``s3://bucket/runs/day1``, ``tracekit.storage``) is named the same way: ``source`` is the key from
the prefix that holds the argument (``runs/day1/x.jsonl``); ``trace_file`` is the URL itself, which reads
from anywhere. Results written to a URL name local trace files by their absolute path.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from pathlib import Path

from tracekit.errors import TraceFormatError
from tracekit.storage import is_url, iter_files, kind, local
from tracekit.trace.io import TRACE_SUFFIX


@dataclass(frozen=True)
class SourceNames:
    """How the results name the trace files of one analysis (picklable: it travels to worker processes)."""

    roots: tuple[tuple[str, str], ...] = ()
    """Each PATH argument as given, with the absolute folder that holds it; empty: name files as given."""
    results_dir: str | None = None
    """Absolute folder of the results file (None: the working directory when ``trace_file`` is asked)."""

    @classmethod
    def of(cls, paths: Iterable[str | Path], results_dir: str | Path | None = None) -> SourceNames:
        """The names for an analysis of ``paths`` whose results are written into ``results_dir``."""
        roots = []
        for path in paths:
            given = os.fspath(local(path))
            if is_url(given):
                given = given.rstrip("/")
                roots.append((given, given.rsplit("/", 1)[0] if given.count("/") > 2 else given))
            else:
                roots.append((given, os.path.dirname(os.path.abspath(given))))
        folder = os.fspath(local(results_dir)) if results_dir is not None else None
        if folder is not None and is_url(folder):
            folder = "/"  # results in object storage: local traces are named by their absolute path
        return cls(tuple(roots), os.path.abspath(folder) if folder is not None else None)

    def source(self, path: str) -> str:
        """``traces[].source``: the file relative to the folder holding the PATH argument that found it."""
        if is_url(path):
            for given, holder in self.roots:
                if is_url(given) and (path == given or path.startswith(given + "/")):
                    return path[len(holder) + 1 :] if path != holder else path
            return path
        return self._local_source(path, os.path.abspath(path))

    def trace_file(self, path: str) -> str:
        """``traces[].trace_file``: the file relative to the results file's folder (or the working directory);
        a URL as it is."""
        if is_url(path):
            return path
        return self._local_trace_file(os.path.abspath(path))

    def names(self, path: str) -> tuple[str, str]:
        """``(source(path), trace_file(path))``, the absolute path of a local file worked out once."""
        if is_url(path):
            return self.source(path), path
        absolute = os.path.abspath(path)
        return self._local_source(path, absolute), self._local_trace_file(absolute)

    def _local_source(self, path: str, absolute: str) -> str:
        for given, holder in self.roots:
            if path == given or path.startswith(_folder_prefix(given)):
                return _relative(absolute, holder).replace(os.sep, "/")
        return path

    def _local_trace_file(self, absolute: str) -> str:
        return _relative(absolute, self.results_dir or os.getcwd()).replace(os.sep, "/")


def trace_paths(paths: Iterable[str | Path]) -> list[str]:
    """The trace files of files and folders (recursively), in the order of ``tracekit.trace.trace_files``,
    as strings: a large corpus costs a tenth of the memory of ``Path`` objects. Raises ``TraceFormatError``
    for a path that does not exist, or a folder that holds no trace file."""
    return list(iter_trace_paths(paths))


def iter_trace_paths(paths: Iterable[str | Path]) -> Iterator[str]:
    """The names of ``trace_paths``, in the same order, lazily: a URL prefix is listed a page at a time as
    the names are consumed, a local folder one folder at a time, so the first trace can be analyzed before
    the listing ends and memory holds a page, not the listing.

    Every argument is checked before this returns (it exists; a folder or prefix holds a trace file: its
    first name is read ahead), so a bad argument is refused before any trace is analyzed; a listing that
    fails later (the store stops answering) raises while the names are consumed."""
    return chain.from_iterable([_names(item) for item in paths])


def _names(item: str | Path) -> Iterator[str]:
    """One argument's names: its first one already found (or ``TraceFormatError``), the rest lazily."""
    text = os.fspath(local(item))
    if is_url(text):
        url = text.rstrip("/") if text.count("/") > 3 else text
        where = kind(url)
        if where == "file":
            return iter([url])
        if where != "directory":
            raise TraceFormatError(f"{url}: no such file, folder or prefix")
        listing, empty = iter_files(url, TRACE_SUFFIX), f"no trace files found under {url}/"
    elif os.path.isdir(text):
        listing, empty = _walk_sorted(text, TRACE_SUFFIX), f"no trace files found in {os.path.join(text, '')}"
    elif os.path.isfile(text):
        return iter([text])
    else:
        raise TraceFormatError(f"{Path(text)}: no such file or folder")
    first = next(listing, None)
    if first is None:
        raise TraceFormatError(f"{empty} (a trace file ends in {TRACE_SUFFIX})")
    return chain([first], listing)


def _relative(path: str, start: str) -> str:
    """``os.path.relpath(path, start)`` of an absolute file path, from its folder's, which is computed once
    per folder and absolute start (a corpus has many files per folder; relpath is a twentieth of analyzing
    a trace)."""
    folder, name = os.path.split(path)
    if not name or not os.path.isabs(start):  # a relative start depends on the working directory: no cache
        return _relpath(path, start)
    where = _folder_relpath(folder, start)
    if start.startswith(path):  # the start inside the "file" itself: relpath's own answer
        return _relpath(path, start)
    return name if where == os.curdir else os.path.join(where, name)


def _relpath(path: str, start: str) -> str:
    try:
        return os.path.relpath(path, start)
    except ValueError:  # another drive (Windows): only an absolute path names it
        return path


_folder_relpath = lru_cache(maxsize=1024)(_relpath)


@lru_cache(maxsize=64)
def _folder_prefix(folder: str) -> str:
    """``folder`` ending in a separator: what a path inside it starts with (one per PATH argument)."""
    return os.path.join(folder, "")


def _walk_sorted(folder: str, suffix: str) -> Iterator[str]:
    """Depth first, names sorted in each folder: the component-by-component order of sorted Paths,
    holding one folder's names per level of depth."""
    with os.scandir(folder) as entries:
        listed = sorted((entry.name, entry.is_dir(), entry.is_file()) for entry in entries)
    for name, is_dir, is_file in listed:
        path = os.path.join(folder, name)
        if is_dir:
            yield from _walk_sorted(path, suffix)
        elif is_file and name.endswith(suffix):
            yield path
