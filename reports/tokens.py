"""Share tokens: 256 random bits from the OS CSPRNG, URL-safe; the one scheme for estimates and sweeps."""

import secrets

SHARE_TOKEN_BYTES = 32  # 256 bits: unguessable (the issue asks for at least 128)


def new_share_token() -> str:
    return secrets.token_urlsafe(SHARE_TOKEN_BYTES)
