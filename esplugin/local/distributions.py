"""Official engine archives on Maven Central, and what each needs to run here.

The integ-test-zip archives are the engines' own minimal distributions. They lack most
modules; OpenSearch publishes its modules as jars, so English analysis (analysis-common) is
assembled from the official artifact. Elasticsearch does not publish module jars, so its
local node runs without analysis-common and the index mapping adapts (see mappings/).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from sira_seek.input_errors import InputError

DEFAULT_VERSIONS = {"opensearch": "2.19.6", "elasticsearch": "9.2.4"}
#: Every version `make test` runs (the defaults with the whole suite; the others with the
#: backend contract suite and the pinned figures, tests/engine_matrix.py), newest first.
TESTED_VERSIONS: dict[str, tuple[str, ...]] = {
    "opensearch": ("3.3.0", "2.19.6"),
    "elasticsearch": ("9.2.4", "8.19.0", "7.17.29"),
}


class ModuleJar(BaseModel):
    """A module assembled into ``modules/<name>`` from a Maven jar plus a descriptor."""

    name: str
    artifact: str  # group:artifact (version = engine version)
    classname: str
    description: str
    extended_plugins: str = ""


class DistributionSpec(BaseModel):
    engine: str
    version: str
    artifact: str  # group:artifact:version:zip
    java_min: int
    java_max: int | None = None
    java_home_env: str
    java_opts_env: str
    conf_env: str
    launcher: str
    extra_settings: dict[str, str] = Field(default_factory=dict)
    modules: list[ModuleJar] = Field(default_factory=list)

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])


def distribution_spec(engine: str, version: str | None = None) -> DistributionSpec:
    if engine not in DEFAULT_VERSIONS:
        raise InputError(f"unknown engine {engine!r}: choose opensearch or elasticsearch")
    version = version or DEFAULT_VERSIONS[engine]
    major = int(version.split(".")[0])
    if engine == "opensearch":
        return DistributionSpec(
            engine=engine,
            version=version,
            artifact=f"org.opensearch.distribution.integ-test-zip:opensearch:{version}:zip",
            java_min=21 if major >= 3 else 11,
            java_max=None if major >= 3 else 23,
            java_home_env="OPENSEARCH_JAVA_HOME",
            java_opts_env="OPENSEARCH_JAVA_OPTS",
            conf_env="OPENSEARCH_PATH_CONF",
            launcher="bin/opensearch",
            extra_settings={},
            modules=[
                ModuleJar(
                    name="analysis-common",
                    artifact="org.opensearch.plugin:analysis-common",
                    # The class was renamed in OpenSearch 3 (the 3.3.0 jar has only the new name).
                    classname="org.opensearch.analysis.common."
                    + ("CommonAnalysisModulePlugin" if major >= 3 else "CommonAnalysisPlugin"),
                    description="English and other analyzers, stemmers, shingles.",
                )
            ],
        )
    if engine == "elasticsearch":
        return DistributionSpec(
            engine=engine,
            version=version,
            artifact=f"org.elasticsearch.distribution.integ-test-zip:elasticsearch:{version}:zip",
            # 9.x needs 21+; 8.x: 17 to 24 (Java 25 came out after 8.19.0; not tried here).
            java_min=21 if major >= 9 else 17,
            java_max=None if major >= 9 else 24,
            java_home_env="ES_JAVA_HOME",
            java_opts_env="ES_JAVA_OPTS",
            conf_env="ES_PATH_CONF",
            launcher="bin/elasticsearch",
            extra_settings={"xpack.security.enabled": "false"},
        )
    raise InputError(f"unknown engine {engine!r}: choose opensearch or elasticsearch")
