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
    with_dependencies: bool = False  # also the jars its pom lists (compile/runtime scope)
    security_policy: str = ""  # the module's plugin-security.policy (the jar has none)


class PluginZip(BaseModel):
    """An official plugin zip from Maven Central, installed with the engine's plugin tool into
    a copy of the assembled distribution (``<engine>-<version>-<suffix>``). A plugin must match
    its engine exactly (version ``<engine version>.0``); Maven Central serves some releases
    only, so a version it does not serve runs without the plugin, with a warning."""

    name: str  # the plugin's folder under plugins/
    artifact: str  # group:artifact (version = engine version + ".0", type zip)
    suffix: str  # the distribution copy's suffix
    purpose: str  # what a node lacks without it, for the warning
    requires_modules: list[ModuleJar] = Field(default_factory=list)  # its extended plugins

    def coords(self, engine_version: str) -> str:
        return f"{self.artifact}:{engine_version}.0:zip"


PAINLESS_POLICY = """grant {
  // Painless compiles scripts and its whitelists into classes of its own loader.
  permission java.lang.RuntimePermission "createClassLoader";
  permission java.lang.RuntimePermission "getClassLoader";
};
"""

KNN_PLUGIN = PluginZip(
    name="opensearch-knn",
    artifact="org.opensearch.plugin:opensearch-knn",
    suffix="knn",
    purpose="vector search (knn_vector fields, kNN queries)",
    # k-NN extends lang-painless (its scoring script), which the integ-test-zip lacks: the
    # module is assembled from its jar and the jars its pom lists.
    requires_modules=[
        ModuleJar(
            name="lang-painless",
            artifact="org.opensearch.plugin:lang-painless",
            classname="org.opensearch.painless.PainlessPlugin",
            description="Painless scripting (k-NN extends it).",
            with_dependencies=True,
            security_policy=PAINLESS_POLICY,
        )
    ],
)
"""The OpenSearch k-NN plugin on the local node: OpenSearch 2.x's only way to ``knn_vector``
fields. Maven Central serves it for 2.19.6 (the default) but not, e.g., for 2.19.4 (the
secured node's version); 3.x's k-NN also extends transport-grpc, which Maven Central does
not publish as a module, so the local node supports vectors on 2.x only
(docs/tutorials/cluster.md)."""


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
    plugins: list[PluginZip] = Field(default_factory=list)

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
            plugins=[KNN_PLUGIN] if major == 2 else [],
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
