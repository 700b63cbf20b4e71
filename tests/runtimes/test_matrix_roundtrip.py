"""The client's conversion property on every runtime: an Arrow table of the types Spark has
goes up (``from_arrow``) and comes back (``collect``, ``to_arrow``, ``to_data_frame``) with
what plain PySpark gives for it. The test is tests/client/test_roundtrip_property.py's, run
here on each runtime of the matrix; ``TESSERA_ROUNDTRIP_PROFILE=client-roundtrip-full`` runs
200 examples instead of 12 (docs/python.md says when it was last run so)."""

from __future__ import annotations

import pytest

from tests.client.conftest import shop, t_env  # noqa: F401 (fixtures, collected here)
from tests.client.test_roundtrip_property import (  # noqa: F401 (the test, collected here)
    test_tables_round_trip_as_plain_pyspark_converts_them,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.runtime_matrix,
    pytest.mark.usefixtures("worker"),
]
