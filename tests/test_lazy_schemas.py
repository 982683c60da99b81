"""Component schemas are stored in Hydra's ConfigStore unbuilt and built when Hydra loads them
(composition._LazySchema): a composition builds only the schemas of the options it selects, each loaded
entry equals what ConfigStore.store would have stored, and a copy of the store (each composition
deep-copies it) or a pickle of it (launchers ship it to their workers) holds the same configs."""

from __future__ import annotations

import copy

import pytest
from hydra.core.config_store import ConfigNode, ConfigStore
from omegaconf import OmegaConf

from asrpt_bench import composition
from asrpt_bench.config import COMPONENT_GROUPS, component_registry

cloudpickle = pytest.importorskip("cloudpickle")  # what the joblib launcher (loky) ships the store to workers with


def eager(kind: str, name: str) -> object:
    params = component_registry(kind).params_type(name)
    return OmegaConf.structured(composition.schema_node(params, f"{name}_{kind}", name, (kind, name)))


def stored(kind: str, name: str) -> ConfigNode:
    return ConfigStore.instance().repo[composition.SCHEMA_GROUP][kind][f"{name}.yaml"]


def test_every_loaded_schema_is_the_one_store_would_have_stored() -> None:
    composition.store_schemas()
    for kind in COMPONENT_GROUPS:
        for name in component_registry(kind):
            loaded = ConfigStore.instance().load(f"{composition.SCHEMA_GROUP}/{kind}/{name}.yaml")
            assert type(loaded) is ConfigNode
            assert loaded.node == eager(kind, name), (kind, name)
            assert OmegaConf.get_type(loaded.node).__name__ == f"{name}_{kind}"


def recording(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(kind, name) of every component schema built from now on (a fresh build cache)."""
    built: list[tuple[str, str]] = []
    original = composition.schema_node

    def schema_node(params: type, class_name: str, name: str | None, owner: tuple[str, str] | None) -> type:
        if name is not None:
            built.append(owner)
        return original(params, class_name, name, owner)

    composition._structured.cache_clear()
    monkeypatch.setattr(composition, "schema_node", schema_node)
    return built


def test_composing_builds_only_the_selected_components_schemas(monkeypatch: pytest.MonkeyPatch) -> None:
    built = recording(monkeypatch)
    config = composition.compose_run_config(["scheduler=fifo", "placement=first_fit"])
    assert config.scheduler.name == "fifo"
    assert sorted(built) == sorted({("scheduler", "fifo"), ("placement", "first_fit"), ("task", "compare"),
                                    ("workload", "philly"), ("predictor", "forest")})


def test_a_deep_copy_stays_unbuilt_and_a_pickle_or_shallow_copy_is_the_plain_entry(
        monkeypatch: pytest.MonkeyPatch) -> None:
    composition.store_schemas()
    built = recording(monkeypatch)
    entry = stored("scheduler", "spjf")
    duplicate = copy.deepcopy(ConfigStore.instance().repo)[composition.SCHEMA_GROUP]["scheduler"]["spjf.yaml"]
    assert isinstance(duplicate, composition._LazySchema)
    assert not built
    for plain in (cloudpickle.loads(cloudpickle.dumps(entry)), copy.copy(entry), cloudpickle.loads(cloudpickle.dumps(duplicate))):
        assert type(plain) is ConfigNode
        assert (plain.name, plain.group, plain.package, plain.provider) == ("spjf.yaml", "schema/scheduler", None, None)
        assert plain.node == eager("scheduler", "spjf")
