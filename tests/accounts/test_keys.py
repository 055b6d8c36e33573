"""The token format and its stored form (accounts.keys), checked against values known by hand."""

from accounts import keys


def test_digest_is_hex_sha256():
    # SHA-256("abc") from FIPS 180-2, appendix B.1
    assert keys.digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_a_new_secret_is_prefixed_and_carries_256_random_bits():
    secret = keys.new_secret()
    assert secret.startswith("cpt_")
    assert len(secret) == 4 + 43  # 32 bytes in unpadded URL-safe base64: ceil(32 * 4 / 3) = 43
    assert keys.new_secret() != secret


def test_prefix_is_the_first_twelve_characters():
    assert keys.prefix_of("cpt_ABCDEFGHIJKL") == "cpt_ABCDEFGH"
    # a DRF authtoken key (40 hex) follows the same rule
    assert keys.prefix_of("0123456789abcdef0123456789abcdef01234567") == "0123456789ab"


def test_matches_only_its_own_digest():
    stored = keys.digest("cpt_secret")
    assert keys.matches("cpt_secret", stored)
    assert not keys.matches("cpt_secreT", stored)
