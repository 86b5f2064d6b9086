"""Where the Hugging Face token comes from, and where a token typed into the window is kept.

A token typed into the window goes to the system keyring (the ``keyring`` package: Secret Service,
KWallet, macOS Keychain, Windows Credential Locker). Without a usable keyring it is kept in memory for
the session only; it is never written to the settings file. Without a typed token, huggingface_hub's
own is used: ``HF_TOKEN``, else the login stored by ``hf auth login`` (``huggingface_hub.get_token()``).

Keyring and login lookups may block (an unlock prompt, a token refresh): worker threads only. No
message here contains a token.
"""

from __future__ import annotations

import logging
import os
from typing import Any

__all__ = ["KeyringUnavailable", "TokenStore", "login_token"]

log = logging.getLogger(__name__)

SERVICE = "tightfit"
ACCOUNT = "huggingface-token"


class KeyringUnavailable(Exception):
    """No system keyring can keep the token; ``str(e)`` says why in words."""


class TokenStore:
    """The window's token in the system keyring. ``backend``: a keyring backend (tests), else the system's."""

    def __init__(self, backend: Any = None) -> None:
        self._given = backend

    def _backend(self) -> Any:
        try:
            import keyring
            from keyring.backends import fail, null
        except ImportError as exc:  # a declared dependency, but the window must work without it
            raise KeyringUnavailable("the keyring package is not installed") from exc
        backend = self._given if self._given is not None else keyring.get_keyring()
        if isinstance(backend, fail.Keyring | null.Keyring):
            raise KeyringUnavailable("no system keyring is available (no Secret Service, KWallet or similar)")
        return backend

    def load(self) -> str | None:
        backend = self._backend()
        try:
            value = backend.get_password(SERVICE, ACCOUNT)
        except Exception as exc:  # backends raise their own errors (locked, D-Bus gone)
            raise KeyringUnavailable(f"the system keyring could not be read ({type(exc).__name__})") from None
        return value or None

    def save(self, token: str) -> None:
        backend = self._backend()
        try:
            backend.set_password(SERVICE, ACCOUNT, token)
        except Exception as exc:
            # from None: a backend's message might quote what it was given.
            raise KeyringUnavailable(f"the system keyring refused the token ({type(exc).__name__})") from None

    def delete(self) -> None:
        backend = self._backend()
        try:
            backend.delete_password(SERVICE, ACCOUNT)
        except Exception as exc:
            from keyring.errors import PasswordDeleteError

            if not isinstance(exc, PasswordDeleteError):  # nothing was saved: nothing to delete
                raise KeyringUnavailable(f"the system keyring could not be changed ({type(exc).__name__})") from None


def login_token() -> tuple[str | None, str]:
    """huggingface_hub's token and where it comes from in words: ``HF_TOKEN``, else the stored login."""
    try:
        from huggingface_hub import constants, get_token
    except ImportError:  # pragma: no cover - a declared dependency
        return None, ""
    if constants.HF_HUB_DISABLE_IMPLICIT_TOKEN:
        return None, ""
    try:
        token = get_token()
    except Exception as exc:  # a misconfigured OIDC exchange, an unreadable token file
        log.warning("huggingface_hub could not give its token (%s)", type(exc).__name__)
        return None, ""
    if not token:
        return None, ""
    from_env = (os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN") or "").strip()
    return token, "HF_TOKEN" if from_env == token else "your huggingface_hub login"
