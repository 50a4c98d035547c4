"""Shared fixtures. ``shared_data`` points at ../shared/data (the real data sets beside the
checkout, as in CI); a missing directory is an error, never a silent skip."""
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data():
    if not SHARED_DATA.is_dir():
        raise FileNotFoundError(f"real data sets expected at {SHARED_DATA} (../shared/data beside the checkout)")
    return SHARED_DATA
