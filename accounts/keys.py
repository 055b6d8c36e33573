"""What an API token looks like, and the one way it is recognised and compared.

A token is "cpt_" + 43 URL-safe characters (256 random bits). Only its first PREFIX_CHARS
characters (shown to the owner so they can tell their tokens apart, and indexed to find the row)
and the SHA-256 of the whole token are stored; the secret itself never is. SHA-256 without a salt
is enough here: the secret is random and long, so there is nothing to guess from the digest
(unlike a password, which needs a slow, salted hash).

Tokens issued by DRF's authtoken before named tokens existed (40 hex characters) follow the same
rule: accounts/migrations/0002 stored their prefix and digest, so they keep working.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

TOKEN_PREFIX = "cpt_"  # recognisable in logs and by secret scanners
PREFIX_CHARS = 12  # "cpt_" + 8 random characters: what the owner sees and the row lookup uses
MAX_TOKEN_CHARS = 200  # a longer Authorization value is refused before any hashing or query


def new_secret() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def prefix_of(secret: str) -> str:
    return secret[:PREFIX_CHARS]


def digest(secret: str) -> str:
    """The stored form of a token: hex SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def matches(secret: str, stored_digest: str) -> bool:
    """Constant-time comparison, so response timing tells nothing about the stored digest."""
    return hmac.compare_digest(digest(secret), stored_digest)
