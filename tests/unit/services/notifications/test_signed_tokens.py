"""services/notifications/signed_tokens: a token reads back only with the ring that signed it, for its purpose,
untouched."""

from __future__ import annotations

from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.notifications import signed_tokens

RING = KeyRing.parse(KeyRing.generate_text())


def test_a_token_reads_back_its_payload_for_its_purpose_only() -> None:
    token = signed_tokens.sign_token(RING, "view", {"n": "ntf_1", "e": 5})
    assert signed_tokens.read_token(RING, "view", token) == {"n": "ntf_1", "e": 5}
    assert signed_tokens.read_token(RING, "action", token) is None


def test_a_forged_truncated_or_unsigned_token_reads_as_nothing() -> None:
    token = signed_tokens.sign_token(RING, "view", {"n": "ntf_1"})
    body, signature = token.split(".")
    forged_body = signed_tokens.sign_token(RING, "view", {"n": "ntf_2"}).split(".")[0]
    for bad in (f"{forged_body}.{signature}", body, f"{body}.", "a.b.c", f"{body}.!!!", "x" * 5000):
        assert signed_tokens.read_token(RING, "view", bad) is None
    assert signed_tokens.read_token(None, "view", token) is None


def test_a_token_signed_by_a_retired_key_reads_while_the_ring_still_holds_it() -> None:
    old = KeyRing.parse(KeyRing.generate_text())
    token = signed_tokens.sign_token(old, "view", {"n": "ntf_1"})
    rotated = KeyRing(RING.keys + old.keys)
    assert signed_tokens.read_token(rotated, "view", token) == {"n": "ntf_1"}
    assert signed_tokens.read_token(RING, "view", token) is None
