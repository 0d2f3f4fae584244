"""The scripted fake upstream behind ``tracekit.testing`` (package-private; import from tracekit.testing).

Modules: ``replies`` (what to answer), ``request`` (what was asked), ``script`` (which reply when),
``spec`` (script files), ``wire`` / ``anthropic_wire`` / ``openai_wire`` (the two wire protocols),
``threads`` (Anthropic thread continuations), ``server`` (aiohttp server and lifecycle).
"""
