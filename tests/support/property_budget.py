"""How many examples a property test runs under the loaded Hypothesis profile.

tests/conftest.py loads the ``full`` profile (CI, the README command) unless
``DSH_HYPOTHESIS_PROFILE=dev`` asks for the fast local loop. A test states the size it runs at
in full; the dev profile runs a tenth of it (at least one example).
"""

from __future__ import annotations

from hypothesis import settings

FULL_MAX_EXAMPLES = 100  # the full profile's default, so that ``examples(n)`` is ``n`` there


def examples(full: int) -> int:
    profile = settings.default  # the loaded profile (tests/conftest.py loads one at start-up)
    assert profile is not None
    return max(1, full * profile.max_examples // FULL_MAX_EXAMPLES)
