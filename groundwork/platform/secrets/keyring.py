"""`GROUNDWORK_SECRET_KEY`: the key ring every secret Groundwork keeps or signs is derived from.

The ring is one or more keys, comma-separated, each the URL-safe base64 of at least 32 random bytes.
The first key signs and encrypts; every key verifies and decrypts, so a key is rotated by putting
a new one first and dropping the old one once nothing it protected is still in use. Each use gets
its own subkey (HKDF-SHA256 with a `purpose` label), so a signature made for one purpose is never
valid for another and an encryption key never doubles as a signing key.

`groundwork up` generates a ring into `<data dir>/secret_key` (mode 0600) when neither the
variable nor that file exists; production sets the variable.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import os
import secrets
from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

ENV_VARIABLE = "GROUNDWORK_SECRET_KEY"
KEY_FILE_NAME = "secret_key"
MIN_KEY_BYTES = 32
_NONCE_BYTES = 12


class KeyRingError(ValueError):
    """The key ring text is malformed (the message says which key and why, never the key)."""


def _decode(text: str, position: int) -> bytes:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise KeyRingError(f"key {position} of {ENV_VARIABLE} is not URL-safe base64") from None
    if len(raw) < MIN_KEY_BYTES:
        raise KeyRingError(f"key {position} of {ENV_VARIABLE} has {len(raw)} bytes; at least {MIN_KEY_BYTES} needed")
    return raw


@dataclass(frozen=True)
class KeyRing:
    """Keys, newest first: `keys[0]` signs and encrypts, every key verifies and decrypts."""

    keys: tuple[bytes, ...]
    _derived: dict[str, tuple[bytes, ...]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.keys:
            raise KeyRingError(f"{ENV_VARIABLE} holds no key")

    @classmethod
    def parse(cls, text: str) -> KeyRing:
        """A ring from `key1,key2,...` (whitespace around keys is ignored)."""
        parts = [p.strip() for p in text.split(",") if p.strip()]
        return cls(tuple(_decode(p, i + 1) for i, p in enumerate(parts)))

    @staticmethod
    def generate_text() -> str:
        """The text of a new ring holding one fresh 32-byte key."""
        return base64.urlsafe_b64encode(secrets.token_bytes(MIN_KEY_BYTES)).decode().rstrip("=")

    def subkeys(self, purpose: str) -> tuple[bytes, ...]:
        """One 32-byte key per ring key for `purpose` (first = current), derived with HKDF-SHA256."""
        cached = self._derived.get(purpose)
        if cached is None:
            cached = tuple(
                HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=f"groundwork:{purpose}".encode()).derive(k)
                for k in self.keys
            )
            self._derived[purpose] = cached
        return cached

    def sign(self, purpose: str, message: bytes) -> bytes:
        """HMAC-SHA256 of `message` under the current key for `purpose`."""
        return hmac.new(self.subkeys(purpose)[0], message, sha256).digest()

    def verify(self, purpose: str, message: bytes, signature: bytes) -> bool:
        """Whether any key of the ring signed `message` for `purpose` (constant-time comparison)."""
        return any(
            hmac.compare_digest(hmac.new(key, message, sha256).digest(), signature) for key in self.subkeys(purpose)
        )

    def encrypt(self, purpose: str, plaintext: bytes, associated_data: bytes = b"") -> bytes:
        """AES-256-GCM under the current key: a random 12-byte nonce followed by the ciphertext and tag."""
        nonce = os.urandom(_NONCE_BYTES)
        return nonce + AESGCM(self.subkeys(purpose)[0]).encrypt(nonce, plaintext, associated_data)

    def decrypt(self, purpose: str, sealed: bytes, associated_data: bytes = b"") -> bytes:
        """Open what `encrypt` sealed under any key of the ring; raises `KeyRingError` if none opens it."""
        nonce, body = sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:]
        for key in self.subkeys(purpose):
            try:
                return AESGCM(key).decrypt(nonce, body, associated_data)
            except Exception:
                continue
        raise KeyRingError("no key of the ring opens this value (was the key that sealed it removed?)")


def read_key_file(data_dir: Path) -> str | None:
    """The ring text stored in `<data_dir>/secret_key`, or None if that file is absent or empty."""
    path = data_dir / KEY_FILE_NAME
    if path.is_file():
        return path.read_text(encoding="utf-8").strip() or None
    return None


def ensure_key_file(data_dir: Path) -> str:
    """The ring text stored in `<data_dir>/secret_key`, generating the file (mode 0600) if absent."""
    path = data_dir / KEY_FILE_NAME
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(KeyRing.generate_text() + "\n")
    text = path.read_text(encoding="utf-8").strip()
    KeyRing.parse(text)  # fail now, with a clear message, rather than at the first signature
    return text
