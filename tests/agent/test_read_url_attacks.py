"""Attacks on read_url against a real site the tests start (each one fails a version that
fetches naively). The site listens on 127.0.0.1 (and ::1), so a page is read only with the
allow-list; each attack shows the same server refused without it, and that no request
reached it."""

from __future__ import annotations

import datetime
import ssl
import time
from typing import Any, get_args

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from agent.net import AllowList, FetchProblem
from agent.steps import STEPS
from agent.tools.web import make_web_tools
from tests.support.web_sites import (
    Server,
    call,
    fake_dns,
    read_url,
    refusal,
    site_routes,
    url_of,
)

# read_url: attacks (each one fails a version that fetches naively)


async def test_loopback_is_refused_without_the_allow_list(site):
    failure = await refusal(read_url(), url=url_of(site, "/secret"))
    assert failure.code == "web.blocked" and failure.params["host"] == "127.0.0.1"
    assert site.hits == []
    text, _ = await call(read_url(allow="127.0.0.1"), url=url_of(site, "/secret"))
    assert "hunter2" in text and site.hits == ["/secret"]


async def test_ipv6_loopback_is_refused_without_the_allow_list(site6):
    url = f"http://[::1]:{site6.port}/secret"
    failure = await refusal(read_url(), url=url)
    assert failure.code == "web.blocked" and site6.hits == []
    text, _ = await call(read_url(allow="::1"), url=url)
    assert "hunter2" in text and site6.hosts == [f"[::1]:{site6.port}"]


@pytest.mark.parametrize(
    "address",
    [
        "169.254.169.254",  # the cloud metadata service
        "10.0.0.1",
        "172.16.0.1",
        "192.168.1.1",
        "100.64.0.1",  # carrier-grade NAT
        "0.0.0.0",
        "224.0.0.1",  # multicast
        "240.0.0.1",  # reserved
        "[fe80::1]",
        "[fc00::1]",
        "[::]",
        "[ff02::1]",
        "[::ffff:169.254.169.254]",  # IPv4-mapped
        "[::ffff:127.0.0.1]",
        "[64:ff9b::a9fe:a9fe]",  # NAT64 of 169.254.169.254
        "[2002:7f00:1::]",  # 6to4 of 127.0.0.1
    ],
)
async def test_private_and_special_addresses_are_refused_before_connecting(address):
    started = time.monotonic()
    failure = await refusal(read_url(deadline=5), url=f"http://{address}/latest/meta-data/")
    assert failure.code == "web.blocked"
    assert time.monotonic() - started < 1  # refused, not tried and timed out


@pytest.mark.parametrize("host", ["localhost", "2130706433", "0x7f.1", "127.1", "0.0.0.0"])
async def test_loopback_spelled_otherwise_is_refused_after_resolving(site, host):
    failure = await refusal(read_url(), url=url_of(site, "/secret", host=host))
    assert failure.code == "web.blocked" and site.hits == []


async def test_a_public_name_that_resolves_to_loopback_is_refused(site):
    resolver = fake_dns(
        {"news.example.com": ["127.0.0.1"], "mixed.example.com": ["93.184.215.14", "127.0.0.1"]}
    )
    for name in ("news.example.com", "mixed.example.com"):  # every address must be public
        failure = await refusal(read_url(resolver=resolver), url=url_of(site, "/secret", name))
        assert failure.code == "web.blocked" and failure.params["host"] == name
    assert site.hits == []


async def test_the_address_checked_is_the_address_connected_to(site):
    calls: list[str] = []
    resolver = fake_dns({"news.example.com": ["127.0.0.1"]}, calls)
    url = url_of(site, "/article", "news.example.com")  # a name the system cannot resolve
    text, artifact = await call(read_url(allow="127.0.0.1", resolver=resolver), url=url)
    assert "do not drift apart" in text and artifact["sources"][0]["url"] == url
    assert calls == ["news.example.com"]  # resolved once: nothing asked again
    assert site.hosts == [f"news.example.com:{site.port}"]


def self_signed(tmp_path: Any, name: str) -> ssl.SSLContext:
    """Return a server TLS context with a certificate for `name` that nobody trusts."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    return context


async def test_https_goes_to_the_checked_address_by_its_name(tmp_path):
    tls = self_signed(tmp_path, "secure.example.com")
    asked_for: list[str | None] = []
    tls.sni_callback = lambda sock, name, context: asked_for.append(name)
    servers: dict[str, Server] = {}
    server = servers["site"] = await Server(site_routes(servers)).start(tls=tls)
    try:
        resolver = fake_dns({"secure.example.com": ["127.0.0.1"]})
        url = f"https://secure.example.com:{server.port}/secret"
        failure = await refusal(read_url(allow="127.0.0.1", resolver=resolver), url=url)
    finally:
        await server.stop()
    # Connected to 127.0.0.1, asked for the name (SNI), and checked the certificate against
    # it: this one is self-signed, so nothing was sent.
    assert asked_for == ["secure.example.com"]
    assert failure.code == "web.unreachable" and server.hits == []
    assert "certificate could not be verified" in str(failure)


async def test_a_name_that_rebinds_after_the_check_does_not_reach_loopback(site):
    # First answer public, every later one loopback: a fetch that resolves again connects home.
    rebinding = fake_dns({"rebind.example.com": [["93.184.215.14"]] + [["127.0.0.1"]] * 5})
    failure = await refusal(
        read_url(resolver=rebinding, deadline=2), url=url_of(site, "/secret", "rebind.example.com")
    )
    assert failure.code in ("web.unreachable", "web.too_slow")  # no internet here
    assert site.hits == []


async def test_a_redirect_from_an_allowed_host_to_a_private_one_is_refused(site):
    resolver = fake_dns({"allowed.example": ["127.0.0.1"], "inside.example": ["10.1.2.3"]})
    tool = read_url(allow="allowed.example", resolver=resolver)
    for target in (
        url_of(site, "/secret"),
        "http://169.254.169.254/latest/meta-data/",
        "http://inside.example/admin",
        f"http://[::ffff:127.0.0.1]:{site.port}/secret",
    ):
        url = url_of(site, "/redirect", "allowed.example") + "?to=" + target
        failure = await refusal(tool, url=url)
        assert failure.code == "web.blocked", target
    assert set(site.hits) == {"/redirect"}
    # Once 127.0.0.1 itself is allowed, the same redirect is followed.
    both = read_url(allow="allowed.example,127.0.0.1", resolver=resolver)
    url = url_of(site, "/redirect", "allowed.example") + "?to=" + url_of(site, "/secret")
    text, artifact = await call(both, url=url)
    assert "hunter2" in text and artifact["sources"][0]["url"] == url_of(site, "/secret")


async def test_redirects_stop_after_five(site):
    failure = await refusal(read_url(allow="127.0.0.1"), url=url_of(site, "/loop"))
    assert failure.code == "web.too_many_redirects" and failure.params["limit"] == 5
    assert site.hits == ["/loop"] * 6


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://127.0.0.1/",
        "gopher://127.0.0.1:70/",
        "javascript:alert(1)",
        "http:///nohost",
        "not a web address",
        "http://user:secret@127.0.0.1:{port}/secret",  # allowed host, but with credentials
    ],
)
async def test_addresses_that_are_not_plain_web_pages_are_refused(site, url):
    failure = await refusal(read_url(allow="127.0.0.1"), url=url.format(port=site.port))
    assert failure.code == "web.bad_address" and site.hits == []


async def test_a_redirect_to_another_scheme_is_refused(site):
    url = url_of(site, "/redirect") + "?to=file:///etc/passwd"
    failure = await refusal(read_url(allow="127.0.0.1"), url=url)
    assert failure.code == "web.bad_address"


async def test_an_endless_body_stops_at_the_byte_cap(site):
    started = time.monotonic()
    text, _ = await call(read_url(allow="127.0.0.1"), url=url_of(site, "/endless"))
    assert time.monotonic() - started < 10
    assert "lorem ipsum" in text
    assert text.endswith("[only the first 2,000,000 bytes of the page were read; the text is cut"
                         " at 8,000 characters]")  # fmt: skip
    assert site.sent < 20_000_000  # what the sockets' buffers held when it hung up


async def test_a_compressed_bomb_stops_at_the_byte_cap(site):
    text, _ = await call(read_url(allow="127.0.0.1", max_bytes=100_000), url=url_of(site, "/bomb"))
    assert "[only the first 100,000 bytes of the page were read;" in text


async def test_a_slow_body_stops_at_the_deadline(site):
    for path in ("/slow", "/silent"):
        started = time.monotonic()
        failure = await refusal(read_url(allow="127.0.0.1", deadline=2), url=url_of(site, path))
        elapsed = time.monotonic() - started
        assert failure.code == "web.too_slow" and failure.params["host"] == "127.0.0.1"
        assert 1.9 < elapsed < 3.5, path


async def test_the_allow_list_takes_networks_and_names(site):
    for allow, host in (("10.0.0.0/8, 127.0.0.0/8", "127.0.0.1"), ("localhost", "localhost")):
        text, _ = await call(read_url(allow=allow), url=url_of(site, "/plain", host))
        assert "Tide tables" in text


def test_an_allow_list_entry_that_is_neither_host_nor_network_is_refused():
    assert AllowList.parse(" Intranet.Example. , 10.0.0.0/8,[::1]") == AllowList(
        frozenset({"intranet.example"}),
        (AllowList.parse("10.0.0.0/8").networks[0], AllowList.parse("::1").networks[0]),
    )
    for entry in ("http://intranet/", "10.0.0.0/33", "host:8080", "two words"):
        with pytest.raises(ValueError):
            make_web_tools(search_url="", fetch_allow=entry)


def test_every_way_a_fetch_fails_is_a_step_people_can_read():
    for problem in get_args(FetchProblem):
        assert STEPS[f"web.{problem}"].kind == "tool_result"
    assert STEPS["web.search_failed"].kind == "tool_result"
