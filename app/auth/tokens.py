"""API keys: random secrets with a recognisable prefix, stored as their sha256."""

from __future__ import annotations

from app.kit.secrets import new_token

API_KEY_PREFIX = "ck_"
# The part of a key shown in lists, so that people can tell keys apart (API.md: 12 characters).
KEY_PREFIX_LENGTH = 12


def new_api_key() -> str:
    return new_token(API_KEY_PREFIX)
