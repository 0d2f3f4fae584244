"""Where a proxy listens: loopback unless told otherwise, the socket bound before anything else starts, and the
URL announced once it serves.

Nothing here imports the HTTP stack: ``tracekit replay`` binds, announces and answers health
(``tracekit.proxy.front_door``) while aiohttp is still being imported.

Example::

    check_host(host, allow_remote, warn)
    sock = bind(host, port)             # a taken port fails here, before any output folder is made
    announce_to_stdout("replay")(url_of(host, sock.getsockname()[1]))
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import Callable

from tracekit.errors import TracekitError


def is_loopback(host: str) -> bool:
    """Whether ``host`` names a loopback address (``localhost`` counts)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(host: str, allow_remote: bool, warn: Callable[[str], None]) -> None:
    """Refuse a non-loopback bind address unless ``allow_remote``; then warn."""
    if is_loopback(host):
        return
    if not allow_remote:
        raise TracekitError(
            f"refusing to listen on {host}: the proxy forwards API keys, so it binds to loopback only. "
            "Pass --allow-remote to listen on other interfaces."
        )
    warn(f"tracekit: warning: listening on {host}; anyone who can reach it can use the upstream with your keys")


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, bound before anything else starts (no output folder created, no
    recording loaded for a port that is taken); ``TracekitError`` saying what to do when it cannot be."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        hint = ""
        if exc.errno == errno.EADDRINUSE:
            hint = "; another program is listening there: give another --port, or --port 0 for a free one (printed)"
        raise TracekitError(f"cannot listen on {host}:{port}: {exc.strerror}{hint}") from exc
    sock.listen(512)
    sock.setblocking(False)
    return sock


def url_of(host: str, port: int) -> str:
    """``http://host:port`` (IPv6 hosts bracketed)."""
    host = host.strip("[]")
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def announce_to_stdout(mode: str) -> Callable[[str], None]:
    """Print ``tracekit <mode>: listening on URL`` and flush."""

    def announce(url: str) -> None:
        print(f"tracekit {mode}: listening on {url}", flush=True)

    return announce


__all__ = ["announce_to_stdout", "bind", "check_host", "is_loopback", "url_of"]
