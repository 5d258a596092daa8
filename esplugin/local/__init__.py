"""The local-node toolkit: real Elasticsearch and OpenSearch nodes and clusters on this machine.

Official archives from Maven Central (``distributions``), one node (``node``), a multi-node
cluster (``cluster``), their security setup (``security``, ``security_opensearch``) and
optional Docker containers (``containers``). ``deployments`` lists what runs here; it is the
one module the engine plugins read (to find a local cluster when no URL is given).
"""
