"""Pipelines of the worker tests (``tests/engine/worker/test_pipelines.py``): an allowed package
of the test workers' ``TESSERA_PIPELINE_PACKAGES`` (tests/workers.py)."""
