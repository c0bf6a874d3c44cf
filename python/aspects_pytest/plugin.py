"""The pytest plugin: the `aspects` fixture (an aspects_pytest.Aspects for one test)."""

import pytest

from . import Aspects


@pytest.fixture
def aspects():
    """Runs programs under fault-injection rules (aspects.run), or gives a live table for a
    program the test starts itself (aspects.table); every table is destroyed afterwards."""
    a = Aspects()
    try:
        yield a
    finally:
        a.close()
