"""The guard against fetching private addresses: a host that is, or resolves to, an address that is not global
(loopback, private, link-local such as a cloud's metadata service at 169.254.169.254, reserved, multicast) is fetched
only when an allow rule names that very host (``web(127.0.0.1)``, not ``web`` nor a glob). A model steered by a page
it read cannot reach the machine's or the network's own services through a rule meant for public documentation.

The check resolves the name once before the fetch; a name whose DNS answer changes between the check and the connect
(rebinding) is not covered.
"""

from __future__ import annotations

import ipaddress
import socket

import trio


async def non_global_address(host: str, port: int) -> str | None:
    """The first address of ``host`` that is not global, or None (a name that does not resolve is left to the
    fetch, which reports it)."""
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        literal = None
    if literal is not None:
        return None if literal.is_global else str(literal)
    try:
        infos = await trio.socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return None
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if not address.is_global:
            return str(address)
    return None


def named_by_rule(host: str, gate: object) -> bool:
    """True when the gate's allow rules name ``host`` literally (``web(HOST)``)."""
    rules = getattr(gate, "rules", None)
    allow = getattr(rules, "allow", ())
    return any(rule.kind == "web" and rule.pattern is not None and rule.pattern.lower() == host for rule in allow)
