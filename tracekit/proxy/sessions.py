"""Session stitching: which agent session each model request belongs to.

A request belongs to (DESIGN.md, "The canonical trace"):

1. the session its ``x-tracekit-session`` header names, else the session its client names itself
   (``client_sessions``: Claude Code's and Codex's session headers, the session inside Claude Code's
   ``metadata.user_id``); in a client's session, a request beside the conversation is a side call
   (``is_side_call``): it joins the trace but leaves the conversation as it was;
2. the session whose reply its continuation names (an Anthropic ``thread.previous_message_id``, a
   Responses ``previous_response_id``: the id of a reply this proxy saw; the request carries only the new
   messages), or the session of the kept conversation it names (a Responses ``conversation``: the first
   request naming it starts the session);
3. the session whose failed turn it repeats (an SDK retry: same canonical body, usually with
   ``x-stainless-retry-count`` > 0) - an attempt of that turn, not a new turn;
4. the session whose conversation it extends: its messages begin with that session's last request's
   messages plus the reply (compared by message fingerprints, so fields SDKs add or drop when they echo
   a reply do not matter);
5. otherwise a new session.

Conversations are compared through a hash chain over message fingerprints, so finding the session a
request extends costs one dictionary lookup per message. All state changes happen synchronously in the
event loop (no awaits), so they need no lock.
"""

from __future__ import annotations

import itertools
import re
import time
import uuid
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from typing import Any

from tracekit.proxy.client_sessions import ClientSession
from tracekit.proxy.memory_release import compacted
from tracekit.proxy.trace_files import SessionTrace
from tracekit.trace.builder import message_fingerprint

#: Expired session names remembered so that a session coming back names the file it continues.
EXPIRED_NAMES_KEPT = 65536


def chain_hashes(fingerprints: list[str], start: int = 0) -> list[int]:
    """``h[i]`` identifies the first ``i + 1`` messages: ``h[i] = H(h[i-1], fingerprint[i])``.

    The chain lives in this process's memory only (it is never written), so ``H`` is Python's own hash of a
    tuple, seeded per process (``PYTHONHASHSEED``) and an order of magnitude cheaper than a digest: two
    conversations collide with odds of about one in 2**64 per comparison."""
    hashes = []
    current = start
    for fingerprint in fingerprints:
        current = hash((current, fingerprint))
        hashes.append(current)
    return hashes


def conversation_chain(
    messages: list[dict[str, Any]], start: list[int] | None = None, fingerprints: list[str] | None = None
) -> list[int]:
    """The hash chain of canonical ``messages`` (continuing ``start`` when given); ``fingerprints`` are the
    messages' ``message_fingerprint`` when the caller has them already."""
    start = start or []
    if fingerprints is None or len(fingerprints) != len(messages):
        fingerprints = [message_fingerprint(message) for message in messages]
    return [*start, *chain_hashes(fingerprints, start[-1] if start else 0)]


@dataclass
class PendingTurn:
    """A turn whose last attempt failed in a way the SDK retries; the next same request is an attempt."""

    key: str
    attempts: int
    exchange: Any
    """The last attempt (``tracekit.proxy.exchange.Exchange``), whose model call is written if no retry comes."""
    outcome: Any
    """Its ``Outcome``."""


@dataclass(eq=False)
class Session:
    """One agent session as the proxy follows it."""

    id: str
    named: str | None = None
    """The session name the trace records (secrets replaced); None for a stitched session."""
    provider: str | None = None
    chain: list[int] = field(default_factory=list)
    """Hash chain of the agent-side canonical conversation: last request's messages plus the reply."""
    wire: list[Any] = field(default_factory=list)
    """The wire items the model has seen (after intercepts), reply included: a continuation's prior items."""
    history: list[dict[str, Any]] = field(default_factory=list)
    """The same conversation as canonical messages."""
    requests: int = 0
    """Model requests so far (attempts included); 1-based numbers select faults."""
    pending: PendingTurn | None = None
    last_key: str | None = None
    trace: SessionTrace | None = None
    """The recorder's per-session state."""
    last_active: float = field(default_factory=time.monotonic)
    """When its last request began or its last answer ended (``time.monotonic``): idle sessions expire."""
    in_flight: int = 0
    """Its requests being answered now (a session is never expired mid-exchange)."""
    reply_ids: list[str] = field(default_factory=list)
    """The reply ids and kept conversations that find it (forgotten with it)."""
    header_name: str | None = None
    """The ``x-tracekit-session`` value that names it, as sent (``named`` has its secrets replaced)."""
    continues: str | None = None
    """The trace file of the expired session this one continues (a named session that came back)."""
    client: str | None = None
    """Where its client named it (``ClientSession.source``: a header's name, ``metadata.user_id``), if it did."""


@dataclass
class Resolution:
    """Where a request belongs and what it continues."""

    session: Session
    how: str
    """'header', 'client', 'thread', 'retry', 'continuity' or 'new'."""
    attempt: int = 1
    prior: list[Any] = field(default_factory=list)
    """Wire items the request does not repeat (a continuation's history)."""
    history: list[dict[str, Any]] = field(default_factory=list)
    """The same, as canonical messages."""
    agent_chain: list[int] = field(default_factory=list)
    side_call: bool = False
    """A side call of the session (``is_side_call``): recorded in its trace, no turn of its conversation."""


def is_side_call(session: Session, chain: list[int], client: ClientSession, no_tools: bool, structured: bool) -> bool:
    """Whether a request of a client's session is a side call: the client says so (Codex's compaction), or it
    offers no tools and either asks for a structured answer (Claude Code's title call), comes from a client that
    offers its tools on every turn (Claude Code's quota check), or does not continue the session's conversation
    (a summary of it, asked in a conversation of its own)."""
    if client.side is not None:
        return True
    if not no_tools:
        return False
    if structured or client.tools_every_turn:
        return True
    known = session.chain
    continues = bool(known) and len(chain) >= len(known) and chain[len(known) - 1] == known[-1]
    return bool(known) and not continues


class SessionRegistry:
    """Finds and advances sessions (see the module docstring)."""

    def __init__(self) -> None:
        self.sessions: list[Session] = []
        self._named: dict[str, Session] = {}
        self._by_reply_id: dict[str, Session] = {}
        self._by_conversation: dict[str, Session] = {}
        self._by_state: dict[tuple[str, int, int], list[Session]] = defaultdict(list)
        self._by_pending_key: dict[str, list[Session]] = defaultdict(list)
        self._counter = itertools.count(1)
        self._stamp = time.strftime("%Y%m%dT%H%M%S")
        self._expired_names: OrderedDict[str, str] = OrderedDict()
        """Named sessions that expired, and their last trace file name (the most recent ``EXPIRED_NAMES_KEPT``)."""

    def resolve(
        self,
        provider: str,
        key: str,
        messages: list[dict[str, Any]],
        *,
        named: str | None = None,
        label: str | None = None,
        previous_id: str | None = None,
        retry_count: int | None = None,
        conversation: str | None = None,
        fingerprints: list[str] | None = None,
        client: ClientSession | None = None,
        no_tools: bool = False,
        structured: bool = False,
    ) -> Resolution:
        """The session of a request with canonical ``messages`` (agent side, before intercepts).

        ``named`` is the ``x-tracekit-session`` value and ``label`` the same with secrets replaced (what the
        trace records). ``previous_id`` is the id of the reply a continuation names. ``retry_count`` is the
        SDK's ``x-stainless-retry-count`` (None when the client sends none): a request that says it is a
        first attempt (0) never joins another session's failed turn. ``conversation`` is the id of a kept
        conversation the request adds to. ``fingerprints`` are the messages' fingerprints when the caller has
        them already (``Conversation.fingerprints``: derived once per request). ``client`` is the session the
        client names itself (``label`` is then its id with secrets replaced); ``no_tools`` and ``structured`` say
        whether the request offers no tools and asks for a structured answer (``is_side_call``)."""
        if not named and client is not None:
            own = self.named_session(client.id, label, provider)
            own.client = client.source
            chain = conversation_chain(messages, fingerprints=fingerprints)
            if is_side_call(own, chain, client, no_tools, structured):
                return Resolution(own, "client", agent_chain=chain, side_call=True)
            return self._within(own, "client", key, messages, previous_id, chain,
                                conversation=conversation, fingerprints=fingerprints)  # fmt: skip
        if named:
            header_session = self.named_session(named, label, provider)
            if conversation and conversation not in self._by_conversation:
                self._by_conversation[conversation] = header_session
                header_session.reply_ids.append(conversation)
            return self._within(
                header_session,
                "header",
                key,
                messages,
                previous_id,
                conversation=conversation,
                fingerprints=fingerprints,
            )
        if conversation:
            kept = self._by_conversation.get(conversation)
            if kept is None:
                kept = self._by_conversation[conversation] = self._new(provider, None)
                kept.reply_ids.append(conversation)
                return Resolution(kept, "new", agent_chain=conversation_chain(messages, fingerprints=fingerprints))
            return self._within(
                kept, "conversation", key, messages, None, conversation=conversation, fingerprints=fingerprints
            )
        if previous_id:
            session = self._by_reply_id.get(previous_id)
            if session is not None:
                return self._within(session, "thread", key, messages, previous_id, fingerprints=fingerprints)
        if retry_count != 0:
            for session in self._by_pending_key.get(key, ()):
                return self._within(session, "retry", key, messages, previous_id, fingerprints=fingerprints)
        chain = conversation_chain(messages, fingerprints=fingerprints)
        for length in range(len(chain) - 1, 0, -1):
            candidates = self._by_state.get((provider, length, chain[length - 1]))
            if candidates:
                return self._within(candidates[0], "continuity", key, messages, None, chain)
        if retry_count:
            for session in reversed(self.sessions):
                if session.last_key == key and session.named is None:
                    return self._within(session, "retry", key, messages, None, chain)
        return Resolution(self._new(provider, None), "new", agent_chain=chain)

    def knows(self, named: str) -> bool:
        """Whether a session of that ``x-tracekit-session`` name exists."""
        return named in self._named

    def named_session(self, named: str, label: str | None = None, provider: str | None = None) -> Session:
        """The session that ``x-tracekit-session: named`` names (created on first use)."""
        session = self._named.get(named)
        if session is None:
            session = self._new(provider, label or named)
            session.continues = self._expired_names.pop(named, None)
            session.header_name = named
            self._named[named] = session
        elif session.provider is None:
            session.provider = provider
        return session

    def _within(
        self,
        session: Session,
        how: str,
        key: str,
        messages: list[dict[str, Any]],
        previous_id: str | None,
        chain: list[int] | None = None,
        *,
        conversation: str | None = None,
        fingerprints: list[str] | None = None,
    ) -> Resolution:
        # Claim the session: a concurrent request with the same history must not join it as well.
        self._unindex_state(session)
        pending = session.pending
        attempt = pending.attempts + 1 if pending is not None and pending.key == key else 1
        if pending is not None and pending.key == key:
            self.set_pending(session, None)
        if how == "retry" and attempt == 1:
            attempt = 2
        prior: list[Any] = []
        history: list[dict[str, Any]] = []
        continues = (previous_id and self._by_reply_id.get(previous_id) is session) or (
            conversation and self._by_conversation.get(conversation) is session
        )
        if continues:
            prior, history = list(session.wire), list(session.history)
            agent_chain = conversation_chain(messages, session.chain, fingerprints)
        else:
            agent_chain = chain if chain is not None else conversation_chain(messages, fingerprints=fingerprints)
        return Resolution(session, how, attempt, prior, history, agent_chain)

    def _new(self, provider: str | None, named: str | None) -> Session:
        number = next(self._counter)
        session_id = safe_name(named) if named else f"{self._stamp}-{number:04d}-{uuid.uuid4().hex[:6]}"
        session = Session(id=session_id, named=named, provider=provider)
        self.sessions.append(session)
        return session

    # -- changes after a response ----------------------------------------------------------------------

    def advance(
        self,
        session: Session,
        agent_chain: list[int],
        reply: dict[str, Any],
        wire: list[Any],
        history: list[dict[str, Any]],
        reply_id: str | None,
        reply_fingerprint: str | None = None,
    ) -> None:
        """The session's conversation is now ``agent_chain`` + ``reply`` (and ``wire`` / ``history`` as the model
        saw it, kept for a continuation that names ``reply_id``). ``reply_fingerprint`` is the reply's
        ``message_fingerprint`` when the caller has it already."""
        self._unindex_state(session)
        session.chain = conversation_chain([reply], agent_chain, [reply_fingerprint] if reply_fingerprint else None)
        session.wire = wire
        session.history = history
        self.release(session)
        if reply_id:
            self._by_reply_id[reply_id] = session
            session.reply_ids.append(reply_id)

    def release(self, session: Session) -> None:
        """Make the session findable by its conversation again (after an exchange, whatever its outcome)."""
        if session.named is not None or session.provider is None or not session.chain:
            return
        sessions = self._by_state[(session.provider, len(session.chain), session.chain[-1])]
        if session not in sessions:
            sessions.append(session)

    def set_pending(self, session: Session, pending: PendingTurn | None) -> None:
        """Mark (or clear) the session's failed turn that a retry would repeat."""
        old = session.pending
        if old is not None:
            sessions = self._by_pending_key.get(old.key, [])
            if session in sessions:
                sessions.remove(session)
            if not sessions:
                self._by_pending_key.pop(old.key, None)
        session.pending = pending
        if pending is not None:
            self._by_pending_key[pending.key].append(session)

    def forget(self, sessions: list[Session]) -> None:
        """Drop expired ``sessions`` from every index (their traces are closed by the recorder); a named one
        that comes back starts a new session whose ``continues`` names the last trace file."""
        gone = set(sessions)
        for session in sessions:
            self._unindex_state(session)
            self.set_pending(session, None)
            for reply_id in session.reply_ids:
                if self._by_reply_id.get(reply_id) is session:
                    del self._by_reply_id[reply_id]
                if self._by_conversation.get(reply_id) is session:
                    del self._by_conversation[reply_id]
            named = session.header_name
            if named is not None and self._named.get(named) is session:
                del self._named[named]
                path = getattr(session.trace, "path", None)
                self._expired_names[named] = path.name if path is not None else session.id
                while len(self._expired_names) > EXPIRED_NAMES_KEPT:
                    self._expired_names.popitem(last=False)
            session.trace = None
        # In place: a new list made now would be allocated among the expired sessions' memory and keep it.
        self.sessions[:] = [session for session in self.sessions if session not in gone]
        # Compacted, not just emptied: a dict keeps its largest size, and so would the process.
        self._named, self._by_reply_id = compacted(self._named), compacted(self._by_reply_id)
        self._by_conversation = compacted(self._by_conversation)
        self._by_state = compacted(self._by_state)
        self._by_pending_key = compacted(self._by_pending_key)

    def _unindex_state(self, session: Session) -> None:
        if not session.chain or session.provider is None:
            return
        index = (session.provider, len(session.chain), session.chain[-1])
        sessions = self._by_state.get(index, [])
        if session in sessions:
            sessions.remove(session)
        if not sessions:
            self._by_state.pop(index, None)


def safe_name(name: str) -> str:
    """A session name usable as a file name (other characters become ``_``, at most 120 long)."""
    cleaned = re.sub(r"[^\w.\-]+", "_", name, flags=re.UNICODE).strip("._") or "session"
    return cleaned[:120]
