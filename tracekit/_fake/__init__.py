"""The scripted fake upstream behind ``tracekit.testing`` (package-private; import from tracekit.testing).

Modules: ``replies`` (what to answer), ``request`` (what was asked), ``script`` (which reply when),
``spec`` (script files), ``wire`` / ``anthropic_wire`` / ``openai_wire`` / ``responses_wire`` (the three
wire protocols), ``threads`` (Anthropic thread continuations), ``response_store`` (the Responses API's
``previous_response_id``), ``server`` (aiohttp server and lifecycle).
"""
