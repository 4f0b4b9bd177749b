"""Outgoing HTTP of background jobs (webhooks, image downloads), with the safety they need.

- The host is resolved once, every address it resolves to is checked (unless private hosts are allowed), and
  the connection goes to that checked address, so DNS cannot answer differently between check and use.
  TLS still verifies the certificate against the host name.
- One deadline covers resolving, connecting, sending and reading; a watchdog closes the socket when it passes,
  so a server that trickles bytes cannot hold us longer.
- Bodies are read up to a size cap; redirects are followed only when asked, each hop checked again.
"""

import http.client
import ipaddress
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

REDIRECTS = (301, 302, 303, 307, 308)
CHUNK = 64 * 1024


class OutboundError(Exception):
    """The request could not be made or its answer was not acceptable; the message says why."""


class Refused(OutboundError):
    pass


class Timeout(OutboundError):
    pass


class TooLarge(OutboundError):
    pass


@dataclass(frozen=True)
class Response:
    status: int
    headers: http.client.HTTPMessage
    body: bytes
    url: str


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_link_local or ip.is_loopback)


def resolve(host: str, port: int, allow_private: bool) -> str:
    """The address to connect to; Refused when any address of the host is private and that is not allowed."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise OutboundError(f"cannot resolve {host}: {error}") from None
    addresses = [info[4][0] for info in infos]
    if not addresses:
        raise OutboundError(f"cannot resolve {host}")
    if not allow_private:
        for address in addresses:
            if not is_public(address):
                raise Refused(f"{host} resolves to {address}, a private, loopback, link-local or reserved address")
    return addresses[0]


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, host, port, address, timeout):
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self):
        self.sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(self, host, port, address, timeout):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.address = address

    def connect(self):
        sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def _abort(connection: http.client.HTTPConnection) -> None:
    sock = connection.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _read(response: http.client.HTTPResponse, connection, deadline: float, max_bytes: int) -> bytes:
    length = response.getheader("Content-Length")
    if length and length.isdigit() and int(length) > max_bytes:
        raise TooLarge(f"the response is {int(length)} bytes, more than {max_bytes} bytes")
    chunks, total = [], 0
    while True:
        if connection.sock is not None:
            connection.sock.settimeout(max(deadline - time.monotonic(), 0.001))
        chunk = response.read(CHUNK)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > max_bytes:
            raise TooLarge(f"the response is more than {max_bytes} bytes")
        chunks.append(chunk)


def request(
    method: str,
    url: str,
    *,
    headers: dict | None = None,
    body: bytes | None = None,
    timeout: float,
    allow_private: bool,
    max_bytes: int = 0,
    max_redirects: int = 0,
    before_body=None,
) -> Response:
    """Send one request (following up to max_redirects redirects with GET) and read at most max_bytes of body.

    A redirect beyond max_redirects is returned as it is when max_redirects is 0, and an error otherwise.
    before_body(status, headers) may raise OutboundError to refuse an answer before its body is read.
    """
    deadline = time.monotonic() + timeout
    for hop in range(max_redirects + 1):
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise Refused(f"{url} is not an absolute http or https URL")
        try:
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError:
            raise Refused(f"{url} has an invalid port") from None
        address = resolve(parts.hostname, port, allow_private)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise Timeout(f"no answer within {timeout:g} s")
        kind = _PinnedHTTPS if scheme == "https" else _PinnedHTTP
        connection = kind(parts.hostname, port, address, remaining)
        watchdog = threading.Timer(remaining, _abort, (connection,))
        watchdog.daemon = True
        watchdog.start()
        try:
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            connection.request(method, target, body=body, headers=headers or {})
            response = connection.getresponse()
            location = response.getheader("Location")
            if response.status in REDIRECTS and max_redirects and location:
                if hop == max_redirects:
                    raise OutboundError(f"more than {max_redirects} redirects")
                url, method, body = urljoin(url, location), "GET", None
                continue
            if before_body is not None:
                before_body(response.status, response.headers)
            data = _read(response, connection, deadline, max_bytes) if max_bytes else b""
            return Response(response.status, response.headers, data, url)
        except (OSError, http.client.HTTPException) as error:
            if time.monotonic() >= deadline or isinstance(error, TimeoutError):
                raise Timeout(f"no answer within {timeout:g} s") from None
            raise OutboundError(f"{type(error).__name__}: {error}") from None
        finally:
            watchdog.cancel()
            connection.close()
    raise OutboundError("unreachable")  # pragma: no cover - the loop returns or raises
