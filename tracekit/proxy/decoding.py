"""Reading an upstream body within bounds: its Content-Encoding undone a piece at a time.

The proxy asks the upstream for ``gzip`` or ``deflate`` only (``ACCEPTED_ENCODINGS``) and decodes the body
itself, never more than ``PIECE`` bytes per step (``zlib``'s ``max_length``): a gzip bomb (1 MB that
inflates to 1 GB) costs no more memory than any other body. A JSON body larger than the limit once decoded
(``--max-response-bytes``) is not passed on: the client gets a 502 saying so (``ResponseTooLarge``) and the
exchange is recorded with what was received. A stream is passed on as it decodes, whatever its length;
the trace keeps a bounded part of it (``exchange.StreamTee``).

A body in an encoding the proxy did not ask for (``br``, ``zstd``, layered encodings) is refused the same
way (``UndecodableResponse``): it cannot be read within bounds, nor recorded.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from tracekit.errors import BodyRefused, ResponseTooLarge, UndecodableResponse

__all__ = ["ACCEPTED_ENCODINGS", "PIECE", "BodyRefused", "Decoder", "ResponseTooLarge", "UndecodableResponse"]

#: What the proxy asks the upstream for (``Accept-Encoding``); it decodes both within bounds.
ACCEPTED_ENCODINGS = "gzip, deflate"
#: The most bytes one decoding step yields.
PIECE = 1024 * 1024


class Decoder:
    """Undoes one Content-Encoding (``identity``, ``gzip``, ``deflate``) piece by piece.

    Example::

        decoder = Decoder("gzip")
        for piece in decoder.feed(compressed_chunk):   # each piece at most PIECE bytes
            ...
        decoder.received, decoder.decoded              # byte counts so far
    """

    def __init__(self, encoding: str | None) -> None:
        self.encoding = (encoding or "identity").strip().lower()
        if self.encoding not in ("identity", "gzip", "x-gzip", "deflate"):
            raise UndecodableResponse(f"the upstream answered with Content-Encoding {self.encoding!r}, which the "
                                      f"proxy did not ask for (it accepts {ACCEPTED_ENCODINGS})")  # fmt: skip
        self.received = 0
        """Bytes as they came (encoded)."""
        self.decoded = 0
        """Bytes after decoding."""
        self._zlib: zlib._Decompress | None = None
        self._raw_deflate = False
        if self.encoding != "identity":
            self._zlib = self._new()

    def _new(self) -> zlib._Decompress:
        if self.encoding == "deflate":
            # RFC 9110 says zlib-wrapped; some servers send raw deflate (as browsers and aiohttp accept).
            return zlib.decompressobj(-zlib.MAX_WBITS if self._raw_deflate else zlib.MAX_WBITS)
        return zlib.decompressobj(16 + zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of ``data`` (each at most ``PIECE`` bytes)."""
        self.received += len(data)
        if self._zlib is None:
            for start in range(0, len(data), PIECE):
                piece = data[start:start + PIECE]
                self.decoded += len(piece)
                yield piece
            return
        while data:
            try:
                piece = self._zlib.decompress(data, PIECE)
            except zlib.error as exc:
                if self.encoding == "deflate" and not self._raw_deflate and self.decoded == 0:
                    self._raw_deflate = True
                    self._zlib = self._new()
                    continue
                raise UndecodableResponse(f"the upstream body is not valid {self.encoding}: {exc}") from exc
            if piece:
                self.decoded += len(piece)
                yield piece
            data = self._zlib.unconsumed_tail
            if self._zlib.eof:
                rest = self._zlib.unused_data
                self._zlib = self._new()  # gzip bodies may hold several members (RFC 1952, section 2.2)
                data = rest

    def describe(self) -> str:
        """What was received, for the record: ``1,048,576 bytes gzip, 67,108,864 decoded so far``."""
        if self.encoding == "identity":
            return f"{self.received:,} bytes received"
        return f"{self.received:,} bytes of {self.encoding} received, {self.decoded:,} decoded"
