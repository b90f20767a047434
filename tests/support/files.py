"""Whole files: writing raw bytes, reading them back."""

from __future__ import annotations

from typing import Any


def write_raw(path: Any, data: bytes) -> None:
    """Writes data as the whole content of the file at path."""
    with open(path, "wb") as f:
        f.write(data)


def read_file(path: Any) -> bytes:
    """The whole content of the file at path."""
    with open(path, "rb") as f:
        return f.read()
