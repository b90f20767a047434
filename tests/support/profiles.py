"""Hypothesis settings of costly and differential tests, from the profiles conftest.py
registers (its docstring says which profile applies when)."""

from __future__ import annotations

import os

from hypothesis import settings

#: The profile HYPOTHESIS_PROFILE names (conftest.py loads it for every test), and the one of
#: the differential tests: that profile, else "ci" in CI (which sets CI=true), else "default".
NAMED_PROFILE = os.environ.get("HYPOTHESIS_PROFILE")
DIFFERENTIAL_PROFILE = NAMED_PROFILE or ("ci" if os.environ.get("CI") else "default")


def _share(base: settings, fraction: float) -> settings:
    """base with a fraction of its examples (at least 10)."""
    return settings(base, max_examples=max(10, int(base.max_examples * fraction)))


def scaled(fraction: float) -> settings:
    """Settings with a fraction of the active profile's examples (for costly tests)."""
    return _share(settings.default, fraction)


def differential(fraction: float = 1.0) -> settings:
    """Settings of a differential test: the differential profile (above), or a fraction of
    its examples for a costly test."""
    return _share(settings.get_profile(DIFFERENTIAL_PROFILE), fraction)
