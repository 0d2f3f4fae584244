"""The proxy's default limits, in a module that loads nothing else (so that ``tracekit record --help``, whose
options show these defaults, does not load the proxy). The options themselves are the CLI's
(``tracekit.cli.proxy_options``).
"""

from __future__ import annotations

#: Seconds to open a connection upstream; the SDKs themselves give up after 5.
DEFAULT_CONNECT_TIMEOUT = 10.0
#: Seconds without a byte from upstream (before the response or between chunks): the SDKs' own default
#: request timeout, so that the proxy is never the first to give up on a slow model.
DEFAULT_READ_TIMEOUT = 600.0
#: Anthropic documents 32 MB as the Messages API's request size limit; larger bodies get a 413 from the proxy.
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
