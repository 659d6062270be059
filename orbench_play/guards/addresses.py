"""Which IP addresses a public demo may connect to.

A visitor's custom endpoint must be an ordinary public unicast address. The
refusal list is IANA's two special-purpose address registries, entry by entry
(IPv4: iana-ipv4-special-registry, IPv6: iana-ipv6-special-registry, as
published in 2025), plus multicast, the deprecated IPv6 site-local block
fec0::/10 (RFC 3879) and every IPv6 address outside global unicast 2000::/3
(the rest of the IPv6 space is reserved by the IETF, link-local, ULA or
multicast). Entries the registries mark as globally reachable (anycast
infrastructure such as AS112, AMT, PCP and TURN) are refused too: no model
endpoint has a reason to live there. Python's `ipaddress` flags are checked
after the table as a second, independent layer.

Three IPv6 forms carry an IPv4 address and are judged by it, not refused
outright: IPv4-mapped (::ffff:0:0/96), 6to4 (2002::/16) and the well-known
NAT64 prefix (64:ff9b::/96, which an IPv6-only host's DNS64 uses for every
IPv4 site). The local-use NAT64 prefix 64:ff9b:1::/48 is refused.
"""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack...
        ipaddress.ip_address("169.254.170.2"),  # AWS ECS task metadata
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
        ipaddress.ip_address("fd00:ec2::254"),  # AWS IPv6
    }
)

_PRIVATE = "a private-network address"

SPECIAL_PURPOSE_V4: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/32", "an unspecified address"),
    ("0.0.0.0/8", 'a "this network" address (RFC 791)'),
    ("10.0.0.0/8", _PRIVATE + " (RFC 1918)"),
    ("100.64.0.0/10", "a carrier-grade NAT address (RFC 6598)"),
    ("127.0.0.0/8", "a loopback address"),
    ("169.254.0.0/16", "a link-local address"),
    ("172.16.0.0/12", _PRIVATE + " (RFC 1918)"),
    ("192.0.0.0/29", "an IPv4 service continuity address (RFC 7335)"),
    ("192.0.0.8/32", "the IPv4 dummy address (RFC 7600)"),
    ("192.0.0.9/32", "the PCP anycast address (RFC 7723)"),
    ("192.0.0.10/32", "the TURN anycast address (RFC 8155)"),
    ("192.0.0.170/31", "a NAT64/DNS64 discovery address (RFC 7050)"),
    ("192.0.0.0/24", "an IETF protocol assignment (RFC 6890)"),
    ("192.0.2.0/24", "a documentation address (TEST-NET-1)"),
    ("192.31.196.0/24", "an AS112 service address (RFC 7535)"),
    ("192.52.193.0/24", "an AMT relay address (RFC 7450)"),
    ("192.88.99.0/24", "a deprecated 6to4 relay anycast address (RFC 7526)"),
    ("192.168.0.0/16", _PRIVATE + " (RFC 1918)"),
    ("192.175.48.0/24", "an AS112 direct delegation address (RFC 7534)"),
    ("198.18.0.0/15", "a benchmarking address (RFC 2544)"),
    ("198.51.100.0/24", "a documentation address (TEST-NET-2)"),
    ("203.0.113.0/24", "a documentation address (TEST-NET-3)"),
    ("224.0.0.0/4", "a multicast address"),
    ("255.255.255.255/32", "the limited broadcast address"),
    ("240.0.0.0/4", "a reserved address (RFC 1112)"),
)
"""(network, what it is), most specific first: the first match names the reason."""

SPECIAL_PURPOSE_V6: tuple[tuple[str, str], ...] = (
    ("::/128", "an unspecified address"),
    ("::1/128", "a loopback address"),
    ("64:ff9b:1::/48", "a local-use NAT64 address (RFC 8215)"),
    ("100::/64", "a discard-only address (RFC 6666)"),
    ("100:0:0:1::/64", "a dummy IPv6 prefix address"),
    ("2001::/32", "a tunnelled (Teredo) address"),
    ("2001:1::1/128", "the PCP anycast address (RFC 7723)"),
    ("2001:1::2/128", "the TURN anycast address (RFC 8155)"),
    ("2001:1::3/128", "the DNS-SD service registration anycast address"),
    ("2001:2::/48", "a benchmarking address (RFC 5180)"),
    ("2001:3::/32", "an AMT address (RFC 7450)"),
    ("2001:4:112::/48", "an AS112 service address (RFC 7535)"),
    ("2001:10::/28", "a deprecated ORCHID address (RFC 4843)"),
    ("2001:20::/28", "an ORCHIDv2 address (RFC 7343)"),
    ("2001:30::/28", "a drone remote ID address (RFC 9374)"),
    ("2001::/23", "an IETF protocol assignment (RFC 2928)"),
    ("2001:db8::/32", "a documentation address"),
    ("2620:4f:8000::/48", "an AS112 direct delegation address (RFC 7534)"),
    ("3fff::/20", "a documentation address (RFC 9637)"),
    ("5f00::/16", "a segment routing (SRv6) address (RFC 9602)"),
    ("fc00::/7", _PRIVATE + " (unique local, RFC 4193)"),
    ("fe80::/10", "a link-local address"),
    ("fec0::/10", "a deprecated site-local address (RFC 3879)"),
    ("ff00::/8", "a multicast address"),
)
"""(network, what it is), most specific first. IPv4-mapped, 6to4 and NAT64 are
unwrapped before this table is consulted (see the module docstring)."""

_TABLES: dict[int, tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...]] = {
    4: tuple((ipaddress.ip_network(net), what) for net, what in SPECIAL_PURPOSE_V4),
    6: tuple((ipaddress.ip_network(net), what) for net, what in SPECIAL_PURPOSE_V6),
}
GLOBAL_UNICAST_V6 = ipaddress.IPv6Network("2000::/3")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_PYTHON_FLAGS = (
    ("is_unspecified", "an unspecified address"),
    ("is_loopback", "a loopback address"),
    ("is_link_local", "a link-local address"),
    ("is_private", _PRIVATE),
    ("is_multicast", "a multicast address"),
    ("is_reserved", "a reserved address"),
)


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped, 6to4 or well-known NAT64 address stands for."""
    embedded = ip.ipv4_mapped or ip.sixtofour
    if embedded is None and ip in _NAT64:
        embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return embedded


def address_problem(ip: IPAddress) -> str | None:
    """Why a public demo must not connect to `ip`, or None when it is a public address."""
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = embedded_ipv4(ip)
        if embedded is not None:
            return address_problem(embedded)
    for network, what in _TABLES[ip.version]:
        if ip in network:
            return what
    if isinstance(ip, ipaddress.IPv6Address) and ip not in GLOBAL_UNICAST_V6:
        return "a reserved IPv6 address (outside global unicast 2000::/3)"
    for attribute, what in _PYTHON_FLAGS:
        if getattr(ip, attribute):
            return what
    if not ip.is_global:
        return "a non-public address"
    return None
