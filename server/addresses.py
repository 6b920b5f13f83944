"""The addresses a student types to reach the server: for a server bound to every interface
(0.0.0.0 or ::), each address this machine's interfaces have beyond loopback, read from the host
(psutil), then localhost; for one bound to an address, that address."""
from __future__ import annotations

import ipaddress
import socket


def reachable(host: str) -> list[str]:
    try:
        bound = ipaddress.ip_address(host)
    except ValueError:          # a name (localhost, the machine's): as given
        return [host]
    if not bound.is_unspecified:
        return [host]
    import psutil
    # an IPv6 wildcard also takes IPv4 connections on Linux (dual stack)
    families = (socket.AF_INET,) if bound.version == 4 else (socket.AF_INET, socket.AF_INET6)
    found = []
    for entries in psutil.net_if_addrs().values():
        for entry in entries:
            if entry.family not in families:
                continue
            address = ipaddress.ip_address(entry.address.split("%", 1)[0])
            # a link-local IPv6 address needs the interface in the URL, which browsers do not take
            if address.is_loopback or address.is_link_local or str(address) in found:
                continue
            found.append(str(address))
    return [*found, "localhost"]


def url(address: str, port: int, token: str | None = None) -> str:
    shown = f"[{address}]" if ":" in address else address
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
