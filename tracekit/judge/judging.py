"""Judging one case run: evidence, request, kept or new answers, and the judged check.

``CaseJudge`` is made once per analysis (it holds the verdict store and the proxies) and asked once per
trace. Example::

    with CaseJudge(JudgeConfig(model="claude-sonnet-4-5", offline=True)) as judge:
        check = judge.judge(case, trace)      # JudgedCheck: pass | acceptable | fail | pending | error
        verdict_checks.append(check.to_dict())

Offline, a request whose answers are not all kept is ``pending`` and nothing is sent. With ``model=None``
(offline only) the verdicts kept for this case and evidence by whichever judge model are used, when
exactly one model has them.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from tracekit.clients import ModelClient, ModelUse, model_client
from tracekit.errors import JudgeError, ModelClientError
from tracekit.judge.evidence import Evidence, collect_evidence
from tracekit.judge.prompt import ROUTE, TEMPLATE_VERSION, JudgeRequest, build_request
from tracekit.judge.transport import JudgeCallError, JudgeTransport
from tracekit.judge.verdict import SampleVerdict, majority, parse_judge_output, response_text
from tracekit.proxy import request_key
from tracekit.storage import is_url, local

if TYPE_CHECKING:
    from tracekit.cases import Case
    from tracekit.trace import Trace

JudgedResult = Literal["pass", "acceptable", "fail", "pending", "error"]

#: Where verdicts are kept unless told otherwise.
DEFAULT_STORE = Path("recordings/judge")
#: The name of the judged check in ``verdict.checks``.
CHECK_NAME = "judge"


@dataclass
class JudgeConfig:
    """How to judge: which model, where verdicts are kept, whether to call out."""

    model: str | None
    """Judge model; None means "whichever model's kept verdicts" (offline only). It is resolved through
    ``tracekit.clients``: a name with a registered prefix is answered by that client (e.g. a rule-based
    stand-in), any other by the judge API."""
    store: str | Path = DEFAULT_STORE
    """A folder, or a URL (``s3://bucket/recordings/judge``: any ``tracekit.storage`` URL)."""
    offline: bool = False
    samples: int = 1
    """Answers per request; the majority decides (ties go to the stricter verdict)."""
    base_url: str | None = None
    """The judge API (default ``ANTHROPIC_BASE_URL`` or the Anthropic API); a fake upstream in tests. A model
    with a registered client prefix goes where its client says (which may ignore this)."""
    api_key: str | None = None
    temperature: float | None = 0.0
    """Sent with each request; None leaves it out (models that reject sampling parameters)."""
    max_tokens: int = 1024

    def __post_init__(self) -> None:
        self.store = self.store if is_url(local(self.store)) else Path(local(self.store))
        if self.samples < 1:
            raise JudgeError(f"samples must be at least 1, got {self.samples}")
        if self.model is None and not self.offline:
            raise JudgeError("a judge model is needed to call the judge (or judge offline from kept verdicts)")
        if self.model is not None:
            judge_client(self.model)  # an unknown or unfit model fails here, before any trace is read


def judge_client(model: str) -> ModelClient:
    """The client of the judge model ``model`` (``tracekit.clients``); ``JudgeError`` when none can judge."""
    try:
        client = model_client(model)
    except ModelClientError as exc:
        raise JudgeError(str(exc)) from exc
    why = client.declines(ModelUse("judge"))
    if why:
        raise JudgeError(f"{model!r} cannot judge: {why}")
    return client


class _Closable(Protocol):
    def close(self) -> None: ...


_Judge = TypeVar("_Judge", bound=_Closable)


class JudgePool(Generic[_Judge]):
    """One judge per judge configuration, shared by the threads of a process and closed when it exits.

    Example::

        judges = JudgePool(CaseJudge)
        judge = judges.get(config)  # the same CaseJudge for every equal config, until judges.close()
    """

    def __init__(self, make: Callable[[JudgeConfig], _Judge]) -> None:
        self._make = make
        self._judges: dict[tuple[Any, ...], _Judge] = {}
        self._lock = threading.Lock()
        atexit.register(self.close)

    def get(self, config: JudgeConfig) -> _Judge:
        """The judge of ``config``, made on first use."""
        key = astuple(config)
        with self._lock:
            judge = self._judges.get(key)
            if judge is None:
                judge = self._judges[key] = self._make(config)
            return judge

    def close(self) -> None:
        """Stop the judges made so far (their replaying proxies); the next ``get`` makes a new one."""
        with self._lock:
            judges = list(self._judges.values())
            self._judges.clear()
        for judge in judges:
            judge.close()


@dataclass
class JudgedCheck:
    """The judged part of a case verdict, as listed in ``verdict.checks``."""

    result: JudgedResult
    case_id: str
    model: str | None
    template_version: str = TEMPLATE_VERSION
    evidence_hash: str | None = None
    request_key: str | None = None
    source: Literal["kept", "new", "mixed", "none"] = "none"
    """Where the answers came from: the store, the judge API, both, or neither (pending / error)."""
    message: str = ""
    """Why pending or error; how a majority was reached."""
    samples: list[SampleVerdict] = field(default_factory=list)
    speaker: SampleVerdict | None = None

    @property
    def reasons(self) -> list[str]:
        return self.speaker.reasons if self.speaker is not None else []

    def to_dict(self) -> dict[str, Any]:
        """The check dict: ``{"check": "judge", "result", "evidence", "judge": {...}}``."""
        speaker = self.speaker
        judge: dict[str, Any] = {
            "model": self.model,
            "template": self.template_version,
            "request_key": self.request_key,
            "evidence_hash": self.evidence_hash,
            "source": self.source,
            "reasons": speaker.reasons if speaker is not None else [],
            "quotes": [quote.to_dict() for quote in speaker.quotes] if speaker is not None else [],
        }
        if speaker is not None and speaker.failure_kind is not None:
            judge["failure_kind"] = speaker.failure_kind
        if self.message:
            judge["note"] = self.message
        if self.result == "error" and speaker is not None:
            judge["error"] = speaker.error
            judge["answer"] = speaker.text
        if len(self.samples) > 1:
            judge["samples"] = [sample.to_dict() for sample in self.samples]
        return {"check": CHECK_NAME, "result": self.result, "evidence": self.summary(), "judge": judge}

    def summary(self) -> str:
        """One line: the reasons, or why there is no verdict."""
        if self.result == "pending":
            return f"judge verdict pending: {self.message}"
        if self.result == "error":
            detail = self.speaker.error if self.speaker is not None and self.speaker.error else self.message
            return f"judge error: {detail}"
        text = "；".join(self.reasons)
        return f"{text} ({self.message})" if self.message else text


class CaseJudge(AbstractContextManager["CaseJudge"]):
    """Judges case runs with one configuration; reuse it for every trace of an analysis, then close it."""

    def __init__(self, config: JudgeConfig, transport: JudgeTransport | None = None) -> None:
        self.config = config
        self.client = judge_client(config.model) if config.model is not None else None
        """The judge model's client (None: judging offline from whichever model's kept verdicts)."""
        if transport is None:
            transport = JudgeTransport(config.store, upstream=config.base_url, offline=config.offline,
                                       api_key=config.api_key, client=self.client)  # fmt: skip
        self.transport = transport
        self._done: dict[str, JudgedCheck] = {}

    @property
    def calls(self) -> int:
        """Judge API calls made so far (answers not found in the store)."""
        return self.transport.calls

    def judge(self, case: Case, trace: Trace) -> JudgedCheck:
        """The judged check of ``trace`` run as ``case`` (a case that uses the judge)."""
        if case.judge is None:
            return JudgedCheck("error", case.id, self.config.model, message=f"case {case.id} has no judge rubric")
        evidence = collect_evidence(case, trace)
        model = self.config.model
        if model is None:
            model, problem = self._kept_model(case, evidence)
            if model is None:
                return JudgedCheck("pending", case.id, None, evidence_hash=evidence.hash, message=problem)
        request = self._request(case, evidence, model)
        if self.client is not None and not self.config.offline:
            declined = self.client.declines(ModelUse("judge", case=case))
            if declined:
                return JudgedCheck("pending", case.id, model, evidence_hash=evidence.hash, message=declined)
        key = request_key(ROUTE, request.body)
        if key in self._done:  # the same evidence twice in one run: one answer
            return self._done[key]
        check = self._judge_request(request, key, evidence)
        self._done[key] = check
        return check

    def close(self) -> None:
        """Close the judge model's endpoint (new verdicts are kept as soon as they arrive)."""
        self.transport.close()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- helpers ---------------------------------------------------------------------------------------

    def _request(self, case: Case, evidence: Evidence, model: str) -> JudgeRequest:
        config = self.config
        return build_request(case, evidence, model, max_tokens=config.max_tokens, temperature=config.temperature)

    def _judge_request(self, request: JudgeRequest, key: str, evidence: Evidence) -> JudgedCheck:
        base: dict[str, Any] = {
            "case_id": request.case_id, "model": request.model, "evidence_hash": evidence.hash, "request_key": key
        }
        wanted = self.config.samples
        kept = self.transport.kept(key)
        if kept < wanted and self.config.offline:
            have = f" ({kept} of {wanted} samples kept)" if kept else ""
            return JudgedCheck("pending", **base, message=f"no kept verdict for this request{have}; judged offline")
        samples: list[SampleVerdict] = []
        sources = set()
        for number in range(wanted):
            from_store = number < kept
            session = f"judge-{request.case_id}-{key[:12]}-s{number}"
            try:
                response = self.transport.send(request.body, session=session, case_id=request.case_id,
                                               kept=from_store, meta=self._meta(request, evidence, number))  # fmt: skip
            except JudgeCallError as exc:
                return JudgedCheck("error", **base, source="none", message=str(exc),
                                   speaker=SampleVerdict("error", error=str(exc)))  # fmt: skip
            sources.add("kept" if from_store else "new")
            samples.append(parse_judge_output(response_text(response), evidence))
        result, speaker, how = majority(samples)
        source: Literal["kept", "new", "mixed"] = "mixed" if len(sources) > 1 else sources.pop()  # type: ignore[assignment]
        return JudgedCheck(result, **base, source=source, message=how, samples=samples, speaker=speaker)

    @staticmethod
    def _meta(request: JudgeRequest, evidence: Evidence, sample: int) -> dict[str, Any]:
        return {"template": request.template_version, "evidence_hash": evidence.hash, "sample": sample,
                "judged_trace": evidence.trace_id}  # fmt: skip

    def _kept_model(self, case: Case, evidence: Evidence) -> tuple[str | None, str]:
        models = self.transport.kept_models()

        found = [model for model in models
                 if self.transport.kept(request_key(ROUTE, self._request(case, evidence, model).body)) > 0]  # fmt: skip
        if not found:
            return None, "no kept verdict for this case and evidence; name a judge model to judge it"
        if len(found) > 1:
            return None, f"kept verdicts from several judge models ({', '.join(found)}); name one"
        return found[0], ""


def judged_checks(case: Case, trace: Trace, judge: CaseJudge | None) -> list[dict[str, Any]]:
    """The judged checks of a case run, as ``verdict.checks`` entries: none when the case is not judged,
    one ``pending`` check when it is but no judge is configured."""
    if not case.uses_judge:
        return []
    if judge is None:
        pending = JudgedCheck("pending", case.id, None, message="no judge configured (--judge-model M)")
        return [pending.to_dict()]
    return [judge.judge(case, trace).to_dict()]
