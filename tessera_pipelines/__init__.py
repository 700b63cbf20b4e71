"""Example pipelines shipped with Tessera (``TESSERA_PIPELINE_PACKAGES`` allows this package by
default): functions ``f(t_env, **args)`` written only against the Python Table API of
docs/api.md §4, so each runs unchanged with a remote ``tessera.connect()`` environment and as a
pipeline job on a worker::

    EXECUTE PIPELINE 'tessera_pipelines.sessions:sessionize'
        WITH ('source' = 'page_views', 'target' = 'sessions', 'gap_minutes' = '30')

Arguments arrive as strings (from ``WITH``); ``tessera_pipelines.args`` turns them into
values or raises ``ValueError`` with a sentence saying what is wrong. Walkthrough:
docs/pipeline-examples.md.
"""
