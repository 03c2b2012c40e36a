"""TLS for the tests: contexts built on the test certificates in ``tests/certs/``.

The certificates exist only for tests: ``ca.pem`` is a test certificate
authority and ``localhost.pem`` the certificate and key it signed for
localhost, 127.0.0.1 and ::1, valid until 2126.  They were made with
``openssl req`` and ``openssl x509 -req``; the CA's key was thrown away.
Every https test of every stage gets its contexts here.
"""

from __future__ import annotations

import ssl
from pathlib import Path

CERTS = Path(__file__).parent / "certs"


def server_tls() -> ssl.SSLContext:
    """Return a server context with the test certificate for localhost."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(CERTS / "localhost.pem")
    return context


def client_tls() -> ssl.SSLContext:
    """Return a client context that trusts the test certificate authority only."""
    return ssl.create_default_context(cafile=CERTS / "ca.pem")


def default_tls_trusting_the_tests() -> ssl.SSLContext:
    """Return the default client context with the test certificate authority trusted too."""
    context = ssl.create_default_context()
    context.load_verify_locations(cafile=CERTS / "ca.pem")
    return context
