"""The hook's wait for the store follows the timeout ``hooks install`` gives it."""

from __future__ import annotations

from dsh_sidecar.hooks import budget, install


def test_the_wait_is_the_installed_timeout_less_the_margin() -> None:
    assert install.TIMEOUT_SECONDS == budget.TIMEOUT_SECONDS
    assert 0 < budget.MARGIN_SECONDS < budget.TIMEOUT_SECONDS
    whole = int((budget.TIMEOUT_SECONDS - budget.MARGIN_SECONDS) * 1000)
    assert budget.wait_ms(100.0, 100.0) == whole
    assert budget.wait_ms(100.0, 101.0) == whole - 1000  # what start-up used is not waited again
    assert budget.wait_ms(100.0, 100.0 + budget.TIMEOUT_SECONDS) == 0
