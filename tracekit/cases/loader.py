"""Loading the case library: case files, the tool catalog and the skill documents.

Layout of a library directory (``cases/`` by default)::

    cases/b2/B2-TS-nn.yaml ...      one case per file, in a folder per dimension
    cases/tools/*.yaml              the tool catalog (tracekit.cases.catalog)
    cases/skills/<name>.md          skill documents the A/B groups activate
    cases/assets/*.png              images the multimodal cases reference

``load_cases`` raises CaseError on the first broken file set; ``collect_library`` keeps going and
returns every problem, which is what ``tracekit cases validate`` reports.

A library may also be a URL (``s3://bucket/cases``, any fsspec URL: ``tracekit.storage``): its files are
copied once per process into a temporary folder and loaded from there (a library is a few hundred small
files); problems name the files by their URL.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracekit.cases.catalog import Catalog, load_catalog_into
from tracekit.cases.model import Case
from tracekit.cases.packed import PackedCases
from tracekit.cases.yaml_source import (
    Problem,
    YamlDocument,
    display_path,
    problems_error,
    read_yaml,
    validate_document,
)
from tracekit.errors import CaseError, StorageError
from tracekit.storage import filesystem, is_url, storage_error

#: Folders of a library directory that hold no case files.
NON_CASE_DIRS = frozenset({"tools", "skills", "assets"})


@dataclass
class CaseEntry:
    """A loaded case with the parsed file it came from (for line numbers in lint messages)."""

    case: Case
    document: YamlDocument

    @property
    def path(self) -> Path:
        """The case file."""
        return self.document.path


@dataclass
class CaseLibrary:
    """Every case of a library directory, with its tool catalog and skill documents."""

    root: Path
    entries: list[CaseEntry] = field(default_factory=list)
    catalog: Catalog = field(default_factory=Catalog)
    skills: dict[str, str] = field(default_factory=dict)
    catalog_dir: Path | None = None
    skills_dir: Path | None = None

    @property
    def cases(self) -> dict[str, Case]:
        """Cases by id (the first file wins when an id is duplicated; lint reports it)."""
        result: dict[str, Case] = {}
        for entry in self.entries:
            result.setdefault(entry.case.id, entry.case)
        return result

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases.values())

    def __len__(self) -> int:
        return len(self.cases)

    def get(self, case_id: str) -> Case:
        """The case with this id; KeyError naming the id when there is none."""
        try:
            return self.cases[case_id]
        except KeyError:
            raise KeyError(f"no case {case_id!r} in {display_path(self.root)}") from None

    def source(self, case_id: str) -> Path:
        """The file the case was loaded from."""
        return next(entry.path for entry in self.entries if entry.case.id == case_id)

    def case_set(self, left_out: Iterable[str] = ()) -> CaseSet:
        """What analysis needs of this library (``CaseSet``); ``left_out``: the case files that did not load."""
        names_checks = any(_names_a_check(case.model_dump(mode="python")) for case in self.cases.values())
        return CaseSet(PackedCases(self.cases), self.catalog, tuple(left_out), names_checks)


@dataclass(frozen=True)
class CaseSet:
    """What analysis needs of a case library: the cases by id and the tool catalog, and the case files that
    did not load (``file:line: what``). Loaded once by the application layer, it travels with the analysis
    settings to every worker process; it leaves out the parsed YAML documents a ``CaseLibrary`` keeps for line
    numbers, which are most of a library's pickled size, and its cases unpickle one by one as they are read
    (``PackedCases``)."""

    cases: Mapping[str, Case]
    catalog: Catalog
    left_out: tuple[str, ...] = ()
    names_checks: bool = False
    """Whether a case names a check of an installed package (``expect.checks``, anywhere in its expectations):
    such a check is handed the whole trace, so analysis then keeps every record whole."""


def _names_a_check(value: Any) -> bool:
    if isinstance(value, dict):
        return bool(value.get("checks")) or any(_names_a_check(item) for item in value.values())
    if isinstance(value, list):
        return any(_names_a_check(item) for item in value)
    return False


def nearest_ids(wanted: str, ids: Iterable[str], count: int = 5) -> list[str]:
    """Up to ``count`` ids most like ``wanted``: first those equal to it once letter case and leading zeros
    are ignored (``ab-cd-1`` is ``AB-CD-01``), then the closest spellings."""

    def folded(case_id: str) -> str:
        return re.sub(r"\d+", lambda number: str(int(number.group())), case_id.upper())

    ids = list(ids)
    same = [case_id for case_id in ids if folded(case_id) == folded(wanted)]
    close = difflib.get_close_matches(folded(wanted), [folded(case_id) for case_id in ids], n=count, cutoff=0.6)
    by_folded = {folded(case_id): case_id for case_id in ids}
    return list(dict.fromkeys(same + [by_folded[name] for name in close]))[:count]


def load_case(path: str | Path) -> Case:
    """Load and validate one case file. Raises CaseError naming file, line and field."""
    return validate_document(read_yaml(path), Case)


def case_files(root: str | Path) -> list[Path]:
    """Every case file under ``root`` (``*.yaml``/``*.yml``, outside tools/, skills/, assets/), sorted."""
    root = Path(root)
    if root.is_file():
        return [root]
    files = [
        path
        for pattern in ("*.yaml", "*.yml")
        for path in root.rglob(pattern)
        if not NON_CASE_DIRS.intersection(path.relative_to(root).parts[:-1])
        and not path.name.startswith((".", "_"))
    ]
    return sorted(files)


def find_library_dir(root: Path, name: str) -> Path | None:
    """The ``name`` folder (tools, skills) of the library ``root`` or of one of its two parents."""
    start = root if root.is_dir() else root.parent
    for candidate in (start, *list(start.resolve().parents)[:2]):
        if (candidate / name).is_dir():
            return candidate / name
    return None


def collect_library(root: str | Path) -> tuple[CaseLibrary, list[Problem]]:
    """Load everything under ``root`` (a folder, a file or a URL) that can be loaded, and every problem found
    on the way."""
    if isinstance(root, str) and is_url(root):
        try:
            copy = _local_copy(root)
        except StorageError as exc:
            return CaseLibrary(root=Path(copy_name(root))), [Problem(root, None, None, str(exc))]
        library, found = collect_library(copy)
        prefix = str(copy)
        named = [Problem(problem.file.replace(prefix, root.rstrip("/"), 1), problem.line, problem.field,
                         problem.message) for problem in found]  # fmt: skip
        return library, named
    root = Path(root)
    library = CaseLibrary(root=root)
    problems: list[Problem] = []
    if not root.exists():
        return library, [Problem(display_path(root), None, None, "no such file or directory")]
    library.catalog_dir = find_library_dir(root, "tools")
    if library.catalog_dir is not None:
        problems += load_catalog_into(library.catalog_dir, library.catalog)
    library.skills_dir = find_library_dir(root, "skills")
    if library.skills_dir is not None:
        library.skills = {path.stem: path.read_text(encoding="utf-8") for path in library.skills_dir.glob("*.md")}
    for path in case_files(root):
        try:
            document = read_yaml(path)
            library.entries.append(CaseEntry(validate_document(document, Case), document))
        except CaseError as exc:
            problems += getattr(exc, "problems", [Problem(display_path(path), None, None, str(exc))])
    return library, problems


def load_cases(root: str | Path = "cases") -> CaseLibrary:
    """Load a case library; raises CaseError listing every file that does not load."""
    library, problems = collect_library(root)
    if problems:
        raise problems_error(problems)
    return library


_COPIES: dict[str, Path] = {}


def copy_name(url: str) -> str:
    """A folder name for the copy of a library URL."""
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in url.rstrip("/"))


def _local_copy(url: str) -> Path:
    """The files under the library URL, copied once per process into a temporary folder."""
    copy = _COPIES.get(url)
    if copy is not None:
        return copy
    import tempfile

    fs, inner = filesystem(url)
    inner = inner.rstrip("/")
    target = Path(tempfile.mkdtemp(prefix="tracekit-cases-")) / copy_name(url).rsplit("_", 1)[-1]
    try:
        if not fs.exists(inner):
            raise FileNotFoundError(url)
        if fs.isdir(inner):
            fs.get(inner + "/", str(target) + "/", recursive=True)
        else:
            target.mkdir(parents=True)
            target = target / inner.rsplit("/", 1)[-1]
            fs.get(inner, str(target))
    except StorageError:
        raise
    except Exception as exc:
        raise storage_error(url, exc) from None
    _COPIES[url] = target
    return target
