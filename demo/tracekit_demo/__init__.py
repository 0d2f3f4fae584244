"""tracekit's offline demo: stand-in models that need no API key, plugged in as any provider would be.

No language model is involved anywhere in this package. It registers the model-name prefix ``scripted``
through the entry point ``tracekit.model_clients`` (``tracekit.clients``), so that these names work
wherever tracekit takes a model:

- ``scripted:reference``: a scripted policy that does what each case's Pass line describes
  (``tracekit run CASES --model scripted:reference --out DIR``);
- ``scripted:flawed``: one that shows the failure each case's Fail line describes;
- ``scripted:judge``: keyword rules answering the judge's prompts
  (``tracekit judge ... --model scripted:judge``, ``tracekit analyze ... --judge-model scripted:judge``).

Each answers in-process from a ``tracekit.testing.FakeUpstream`` behind the same recording proxy as a
real model, and says what it is: traces made with it name the policy in ``header.source`` and
``header.meta.policy``, the judge's reasons end in ``（脚本化判断）``.

- ``policies``: the scripted policies (the plan language, plans derived from ``expect``, hand-written
  plans per case in ``policies.scripts``);
- ``judge``: the rule-based judge's heuristics;
- ``clients``: the ``scripted`` model client (the entry point's factory).
"""
