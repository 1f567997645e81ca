"""One verified TLS context for every HTTP client of the process.

httpx builds a new `ssl.SSLContext` for each client and transport made without one, and
building one loads the certificate authorities' bundle (~50 ms of CPU here). The app
makes a client per connection attempt, per judge and per suite run, so they share this
one: it is what httpx would build (certifi's bundle, or `SSL_CERT_FILE`/`SSL_CERT_DIR`
when set, as `trust_env` reads them), made once and safe to share between threads.

May import: the standard library and httpx.
"""

from __future__ import annotations

import functools
import ssl


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's TLS context, built at the first call."""
    import httpx

    return httpx.create_ssl_context()
