"""Fixtures for the agent frameworks' tests: a fresh grantry per test and the scripted person
who signs in, shared with the interop tests (tests/interop/conftest.py, loaded as a module:
its fixtures are not this folder's)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

_interop = Path(__file__).resolve().parent.parent / "interop"
sys.path.insert(0, str(_interop))  # its `leaks`
_spec = importlib.util.spec_from_file_location("interop_support", _interop / "conftest.py")
support = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(support)

Grantry = support.Grantry
sign_in = support.sign_in
assert_connected = support.assert_connected


def link_in(text: str) -> str:
    """The connect link a text carries (grantry ends its texts with it)."""
    found = re.search(r"https?://\S+/connect/\S+", text)
    assert found, f"no connect link in: {text}"
    return found.group(0)


@pytest.fixture
def grantry():
    server = Grantry([])
    yield server
    server.stop()


@pytest.fixture
def grantry_spec_mode():
    server = Grantry(["--no-url-elicitation", "spec"])
    yield server
    server.stop()
