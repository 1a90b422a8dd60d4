"""Fetch a public web page safely: no private addresses, bounded in bytes, time and hops.

Every hop (the first address and each redirect) is checked after DNS resolution: every
address the name resolves to must be public, or allowed by `AllowList`, and the request
then goes to the address that was checked (the URL carries the IP; the Host header and
TLS's SNI carry the name), so a second resolution cannot rebind the name to another host.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
# A host name to its addresses (the tests inject a fake mapping; no second lookup is made).
Resolver = Callable[[str], Awaitable[Sequence[str]]]
FetchProblem = Literal[
    "bad_address",
    "blocked",
    "unreachable",
    "too_slow",
    "too_many_redirects",
    "page_error",
    "unsupported",
]

REDIRECTS = frozenset({301, 302, 303, 307, 308})
MAX_URL_CHARS = 2048
USER_AGENT = "Mozilla/5.0 (compatible; chatsite-read-url/1.0)"
# Not in Python 3.11's `is_private`/`is_global` lists, or counted as global there.
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


@dataclass(frozen=True)
class FetchLimits:
    """How much one fetch may take: bytes of body, seconds in all, redirects followed."""

    max_bytes: int = 2_000_000
    deadline: float = 10.0
    max_redirects: int = 5


@dataclass(frozen=True)
class Page:
    """A fetched body: `url` is the last hop's, `truncated` when it stopped at max_bytes."""

    url: str
    status: int
    content_type: str  # the media type, lower case, without parameters
    charset: str | None
    body: bytes
    truncated: bool


class FetchError(Exception):
    """A fetch that did not happen or did not finish; `problem` says which way, `host` where."""

    def __init__(self, problem: FetchProblem, message: str, *, host: str = "", **params) -> None:
        super().__init__(message)
        self.problem = problem
        self.host = host
        self.params = params


@dataclass(frozen=True)
class AllowList:
    """Hosts and networks that may be reached although private (`CHAT_FETCH_ALLOW`)."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def parse(cls, text: str) -> AllowList:
        """Read "host, 10.0.0.0/8, 127.0.0.1" (raises ValueError on an entry that is neither)."""
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in (part.strip().lower().rstrip(".") for part in text.split(",")):
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                if "/" in entry or ":" in entry or " " in entry:
                    raise ValueError(f"not a host name or network: {entry!r}") from None
            hosts.add(entry.encode("idna").decode("ascii"))
        return cls(frozenset(hosts), tuple(networks))

    def allows_host(self, host: str) -> bool:
        return host.lower().rstrip(".") in self.hosts

    def allows_address(self, address: IPAddress) -> bool:
        candidates = [address, *_embedded(address)]
        return any(
            ip.version == net.version and ip in net for ip in candidates for net in self.networks
        )


def _embedded(address: IPAddress) -> list[ipaddress.IPv4Address]:
    """Return the IPv4 addresses an IPv6 address carries (mapped, 6to4, NAT64)."""
    if address.version == 4:
        return []
    found = [address.ipv4_mapped, address.sixtofour]
    if address in _NAT64:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return [ip for ip in found if ip is not None]


def is_public(address: IPAddress) -> bool:
    """Return whether `address` is on the public internet (and so do the IPv4 it carries)."""
    if any(
        (
            address.is_private,
            address.is_loopback,
            address.is_link_local,
            address.is_multicast,
            address.is_reserved,
            address.is_unspecified,
            getattr(address, "is_site_local", False),
            address.version == 4 and address in _CGNAT,
            not address.is_global,
        )
    ):
        return False
    return all(is_public(inner) for inner in _embedded(address))


async def resolve_host(host: str) -> list[str]:
    """Return the addresses the system resolver gives `host`."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def parse_url(text: str) -> httpx.URL:
    """Return `text` as an http(s) URL without credentials (raises FetchError otherwise)."""
    text = text.strip()
    try:
        url = httpx.URL(text)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise FetchError("bad_address", f"{text[:200]!r} is not a valid URL") from exc
    if len(text) > MAX_URL_CHARS:
        raise FetchError("bad_address", "the URL is too long")
    if url.scheme not in ("http", "https"):
        raise FetchError("bad_address", "only http and https URLs can be read")
    if not url.host:
        raise FetchError("bad_address", "the URL has no host")
    if url.userinfo:
        raise FetchError("bad_address", "URLs with a user name or password are not read")
    return url


async def checked_addresses(url: httpx.URL, allow: AllowList, resolver: Resolver) -> list[str]:
    """Return the addresses to connect to for `url`, each one public or allowed."""
    host = url.raw_host.decode("ascii")
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:  # a name (or an IP spelled oddly, "2130706433"): what it resolves to
        try:
            addresses = [ipaddress.ip_address(name) for name in await resolver(host)]
        except (OSError, UnicodeError) as exc:
            raise FetchError("unreachable", f"could not resolve {host}", host=host) from exc
        if not addresses:
            raise FetchError("unreachable", f"{host} has no address", host=host) from None
    if allow.allows_host(host):
        return [str(ip) for ip in addresses]
    for ip in addresses:
        if not (is_public(ip) or allow.allows_address(ip)):
            raise FetchError(
                "blocked",
                f"{host} is not on the public internet ({ip}); only public pages can be read",
                host=host,
            )
    return [str(ip) for ip in addresses]


async def fetch(
    url: str,
    *,
    allow: AllowList,
    limits: FetchLimits,
    accept: Sequence[str],
    resolver: Resolver = resolve_host,
) -> Page:
    """GET `url` following at most `limits.max_redirects` checked redirects, within
    `limits.deadline` seconds in all, reading at most `limits.max_bytes` of body.

    Only media types in `accept` are read; anything else raises FetchError("unsupported").
    """
    hops = [parse_url(url)]  # the URL of every hop so far: a timeout names the last one
    try:
        async with asyncio.timeout(limits.deadline):
            return await _follow(hops, allow, limits, accept, resolver)
    except (TimeoutError, httpx.TimeoutException) as exc:
        host = hops[-1].host
        raise FetchError(
            "too_slow", f"{host} took longer than {limits.deadline:g} s", host=host
        ) from exc


async def _follow(
    hops: list[httpx.URL],
    allow: AllowList,
    limits: FetchLimits,
    accept: Sequence[str],
    resolver: Resolver,
) -> Page:
    url = hops[-1]
    # No keep-alive: a TLS connection checked for one name must not carry another's request.
    async with httpx.AsyncClient(
        trust_env=False,  # a proxy from the environment would resolve the name again
        follow_redirects=False,
        timeout=limits.deadline,
        limits=httpx.Limits(max_keepalive_connections=0),
        headers={
            "User-Agent": USER_AGENT,
            "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1",
            "Accept-Encoding": "gzip, deflate",
        },
    ) as client:
        for _hop in range(limits.max_redirects + 1):
            addresses = await checked_addresses(url, allow, resolver)
            response = await _connect(client, url, addresses)
            try:
                location = response.headers.get("location")
                if response.status_code in REDIRECTS and location:
                    url = parse_url(str(url.join(location)))
                    hops.append(url)
                    continue
                return await _read(response, url, limits, accept)
            finally:
                await response.aclose()
    raise FetchError(
        "too_many_redirects",
        f"more than {limits.max_redirects} redirects",
        host=url.host,
        limit=limits.max_redirects,
    )


async def _connect(
    client: httpx.AsyncClient, url: httpx.URL, addresses: list[str]
) -> httpx.Response:
    """Send the GET to the first of `addresses` that takes the connection."""
    host = url.raw_host.decode("ascii")
    extensions = {"sni_hostname": host} if url.scheme == "https" else {}
    for address in addresses:
        request = client.build_request(
            "GET",
            url.copy_with(host=address),
            headers={"Host": url.netloc.decode("ascii")},
            extensions=extensions,
        )
        try:
            return await client.send(request, stream=True)
        except httpx.ConnectError as exc:
            if _caused_by(exc, ssl.SSLCertVerificationError):
                raise FetchError(
                    "unreachable", f"{host}'s certificate could not be verified", host=host
                ) from exc
            continue  # the next address, if there is one
        except httpx.TimeoutException:
            raise
        except httpx.HTTPError as exc:
            raise FetchError("unreachable", f"{host} broke off the connection", host=host) from exc
    raise FetchError("unreachable", f"could not connect to {host}", host=host)


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


async def _read(
    response: httpx.Response, url: httpx.URL, limits: FetchLimits, accept: Sequence[str]
) -> Page:
    host = url.host
    if response.status_code >= 400:
        raise FetchError(
            "page_error",
            f"{host} answered HTTP {response.status_code}",
            host=host,
            status=response.status_code,
        )
    content_type = response.headers.get("content-type", "")
    media_type = content_type.split(";")[0].strip().lower()
    if media_type not in accept:
        raise FetchError(
            "unsupported",
            f"{media_type or 'a page without a content type'} cannot be read as text",
            host=host,
            kind=media_type or "unknown",
        )
    try:
        body, truncated = await read_limited(response, limits.max_bytes)
    except httpx.TimeoutException:
        raise
    except (httpx.HTTPError, zlib.error) as exc:
        raise FetchError("unreachable", f"{host} broke off the page", host=host) from exc
    charset = response.charset_encoding
    return Page(str(url), response.status_code, media_type, charset, body, truncated)


async def read_limited(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """Read at most `max_bytes` of decoded body, then stop; return it and whether it was cut.

    gzip and deflate are decoded here, bounded, so a small compressed body cannot grow
    past `max_bytes` in memory.
    """
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding in ("gzip", "x-gzip", "deflate"):
        # gzip: a gzip header; deflate: zlib or gzip, whichever the header says (32).
        decoder = zlib.decompressobj(zlib.MAX_WBITS | (16 if "gzip" in encoding else 32))
    elif encoding in ("", "identity"):
        decoder = None
    else:
        raise FetchError("unsupported", f"unknown content encoding {encoding!r}", kind=encoding)
    body = bytearray()
    async for chunk in response.aiter_raw():
        room = max_bytes - len(body)
        body += decoder.decompress(chunk, room + 1) if decoder else chunk[: room + 1]
        if len(body) > max_bytes:
            return bytes(body[:max_bytes]), True
    return bytes(body), False
