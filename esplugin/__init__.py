"""Everything that knows Elasticsearch or OpenSearch, in two subpackages.

- ``sira_seek.esplugin.engines``: the engine plugins behind ``sira_seek.backend.SearchBackend``
  (the REST backends, the registry that detects the engine and connects, client options,
  the errors users see, and choosing the cluster a command talks to).
- ``sira_seek.esplugin.local``: the local-node toolkit behind ``sira-seek node``
  (distributions from Maven Central, single nodes, multi-node clusters, security setup,
  optional Docker containers).

The public interface between them is narrow and one module each way:
``engines`` reads what runs on this machine only through ``local.deployments``
(``running_deployments``), and ``local`` uses only ``engines.errors`` (its errors are engine
errors). ``tests/unit/foundation/test_layering.py`` checks both directions.
"""
