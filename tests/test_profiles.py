"""Profiles: graph.txt / Galvatron readers, the zoo, configurations, memory model, stage partition."""

from __future__ import annotations

import itertools
import json
import math
import re

import numpy as np
import pytest

from asrpt_bench.core import Cluster, ConfigError, TrainingPlan
from asrpt_bench.profiles import (
    Layer,
    ModelProfile,
    ParallelConfig,
    available_gpu_counts,
    build_plan,
    configurations,
    get_model,
    model_family,
    model_names,
    partition,
    plans_for,
    read_galvatron_t5,
    read_graph_txt,
    register_model,
    stage_memory_bytes,
    stages_of,
    zoo_summary,
)
from asrpt_bench.profiles import zoo
from asrpt_bench.timing import DEFAULT_TIMING, TimingModel

# node4 is listed before node3 to check the chain follows node numbers, not file order.
TINY_GRAPH = """\
node1 -- Input -- forward_compute_time=5.0, backward_compute_time=0.000, activation_size=100.0, parameter_size=0.0
node2 -- Conv -- forward_compute_time=2.0, backward_compute_time=4.0, activation_size=[30.0; 20.0], parameter_size=1000.0
node4 -- Right -- forward_compute_time=3.0, backward_compute_time=1.0, activation_size=60.0, parameter_size=0.0
node3 -- Left -- forward_compute_time=1.0, backward_compute_time=2.0, activation_size=40.0, parameter_size=200.0
node5 -- Add -- forward_compute_time=0.5, backward_compute_time=0.5, activation_size=10.0, parameter_size=0.0
\tnode1 -- node2
\tnode2 -- node4
\tnode2 -- node3
\tnode3 -- node5
\tnode4 -- node5
  node2 -- node5
"""


@pytest.fixture
def tiny_graph(tmp_path):
    path = tmp_path / "tiny.graph.txt"
    path.write_text(TINY_GRAPH)
    return path


@pytest.fixture
def isolated_zoo(monkeypatch):
    """Register models into a copy of the zoo so other tests see the built-in models only."""
    monkeypatch.setattr(zoo, "_ZOO", dict(zoo._ZOO))
    zoo._clear_caches()
    yield
    monkeypatch.undo()
    zoo._clear_caches()


def chain(compute, params, outputs, boundaries, name="chain") -> ModelProfile:
    layers = tuple(Layer(f"l{k}", c, o, b, p)
                   for k, (c, p, o, b) in enumerate(zip(compute, params, outputs, boundaries)))
    return ModelProfile(name=name, layers=layers, source="test")


# ---------------------------------------------------------------- graph.txt reader

def test_graph_txt_chain_values_worked_by_hand(tiny_graph):
    profile = read_graph_txt(tiny_graph, batch_size=4)
    assert profile.name == "tiny"
    assert [layer.name.split()[0] for layer in profile.layers] == [f"node{k}" for k in range(1, 6)]
    # input compute zeroed (data loading); F + B in ms -> s
    assert [layer.compute_s for layer in profile.layers] == pytest.approx([0.0, 0.006, 0.003, 0.004, 0.001])
    # bracketed list [30; 20] is summed
    assert [layer.output_bytes for layer in profile.layers] == [100.0, 50.0, 40.0, 60.0, 10.0]
    # cut after node3 carries node2 (skip to node5) + node3; after node4 also node4
    assert [layer.boundary_bytes for layer in profile.layers] == [100.0, 50.0, 90.0, 150.0, 0.0]
    assert profile.param_bytes == 1200.0
    assert profile.batch_size == 4


@pytest.mark.parametrize("bad_line, message", [
    ("node6 -- Foo -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=1.0",
     "missing parameter_size"),
    ("node6 -- Foo -- forward_compute_time=abc, backward_compute_time=1.0, activation_size=1.0, "
     "parameter_size=0", "forward_compute_time='abc' is not a number"),
    ("node6 -- Foo -- forward_compute_time=-1, backward_compute_time=1.0, activation_size=1.0, "
     "parameter_size=0", "must be a finite non-negative number"),
    ("this is not a profile line", "expected a node line"),
    ("\tnode1 -> node2", "expected an edge line"),
    ("\tnode1 -- node9", "edge refers to undefined node9"),
    ("node2 -- Again -- forward_compute_time=1, backward_compute_time=1, activation_size=1, parameter_size=0",
     "node2 is defined twice"),
])
def test_malformed_graph_txt_names_file_and_line(tmp_path, bad_line, message):
    lines = TINY_GRAPH.splitlines()
    lines.insert(2, bad_line)
    path = tmp_path / "broken.txt"
    path.write_text("\n".join(lines))
    with pytest.raises(ConfigError, match=re.escape(f"{path}, line 3") + ".*" + re.escape(message)):
        read_graph_txt(path)


def test_graph_txt_cycle_and_missing_file_are_config_errors(tmp_path):
    path = tmp_path / "cycle.txt"
    path.write_text(TINY_GRAPH + "\tnode5 -- node2\n")
    with pytest.raises(ConfigError, match="cycle"):
        read_graph_txt(path)
    with pytest.raises(ConfigError, match="cannot read profile file"):
        read_graph_txt(tmp_path / "absent.txt")


# ---------------------------------------------------------------- Galvatron reader

def write_t5(tmp_path, times=None, meta=None):
    times = times if times is not None else {
        "layertype_0_bsz2_seq4": 1.0, "layertype_1_bsz2_seq4": 2.0, "layertype_other_bsz2_seq[4,4]": 0.5}
    meta = meta if meta is not None else {
        "d_model": 8, "d_ff": 32, "num_heads": 2, "d_kv": 4, "num_layers": 2, "vocab_size": 10}
    computation, architecture = tmp_path / "comp.json", tmp_path / "meta.json"
    computation.write_text(json.dumps(times, indent=1))
    architecture.write_text(json.dumps(meta))
    return computation, architecture


def test_galvatron_t5_values_worked_by_hand(tmp_path):
    profile = read_galvatron_t5(*write_t5(tmp_path), batch_size=2, seq_len=4)
    assert [layer.name for layer in profile.layers] == [
        "embeddings_and_head", "encoder_0", "encoder_1", "decoder_0", "decoder_1"]
    # per-sample forward ms x batch 2 x (1 forward + 2 backward) / 1000
    assert [layer.compute_s for layer in profile.layers] == pytest.approx([0.003, 0.006, 0.006, 0.012, 0.012])
    # encoder 4*8*8 + 2*8*32 + 2*8 = 784 params; decoder 8*8*8 + 2*8*32 + 3*8 = 1048; embeddings 80
    assert [layer.param_bytes for layer in profile.layers] == [320.0, 3136.0, 3136.0, 4192.0, 4192.0]
    hidden = 2 * 4 * 8 * 2  # batch * seq * d_model * 2 bytes (bf16)
    assert [layer.output_bytes for layer in profile.layers] == [2 * hidden] + [hidden] * 4
    assert [layer.boundary_bytes for layer in profile.layers] == [2 * hidden] * 4 + [0.0]


def test_galvatron_errors_name_file_and_line_or_key(tmp_path):
    computation, architecture = write_t5(tmp_path)
    with pytest.raises(ConfigError, match=re.escape(str(computation)) + ".*layertype_0_bsz3_seq4"):
        read_galvatron_t5(computation, architecture, batch_size=3, seq_len=4)
    computation.write_text('{\n "layertype_0_bsz2_seq4": 1.0,\n oops\n}')
    with pytest.raises(ConfigError, match=re.escape(f"{computation}, line 3")):
        read_galvatron_t5(computation, architecture, batch_size=2, seq_len=4)
    computation, architecture = write_t5(tmp_path, meta={"d_model": 8})
    with pytest.raises(ConfigError, match=re.escape(str(architecture)) + ".*'d_ff'"):
        read_galvatron_t5(computation, architecture, batch_size=2, seq_len=4)


# ---------------------------------------------------------------- the zoo

README_TOTALS = {  # (sum fwd ms - input fwd ms + sum bwd ms, parameter MB) from the data READMEs
    "vgg19": (51.4 + 96.2 - 3.4, 548.0),
    "inception_v3": (311.0 + 399.8 - 21.7, 108.6),
    "resnet50": (201.5 + 260.9 - 18.962, 102.2),
    "gnmt": (90.3 + 158.6, 1163.0),
    "bert24": (193.8 + 321.6 - 0.01, 1340.6),
    "xlnet24": (99.1 + 119.0 - 17.0, 1379.0),
}


def test_zoo_names():
    assert set(model_names()) >= {"vgg19", "inception_v3", "resnet50", "gnmt", "bert24", "xlnet24", "t5"}


@pytest.mark.parametrize("name", sorted(README_TOTALS))
def test_zoo_totals_match_the_data_readmes(name):
    compute_ms, param_mb = README_TOTALS[name]
    profile = get_model(name)
    factor = zoo.SPEED_FACTORS[model_family(name)]
    assert model_family(name) == ("pipedream" if name in ("inception_v3", "resnet50") else "dapple")
    assert profile.compute_s == pytest.approx(compute_ms * factor / 1000, rel=2e-3)
    assert profile.param_bytes / 1e6 == pytest.approx(param_mb, abs=0.06)
    assert "/work/shared" not in profile.source  # loaded from the package
    assert all(layer.boundary_bytes >= 0 for layer in profile.layers)
    assert profile.layers[-1].boundary_bytes == 0


def test_t5_profile_is_t5_3b_at_batch_8_seq_512():
    profile = get_model("t5")
    assert profile.num_layers == 1 + 24 + 24 and profile.batch_size == 8
    per_sample_forward_ms = 0.801060605049134 + 24 * 0.44763902425766 + 24 * 0.6277944445610044
    assert profile.compute_s == pytest.approx(per_sample_forward_ms * 8 * 3 / 1000 * 2.5)
    # HF t5-3b has 2,851,598,336 parameters; we omit the 4,096 relative-bias and final-norm ones
    assert profile.param_bytes == 4 * 2_851_594_240


def test_speed_factor_override_scales_compute_only():
    base, faster = get_model("bert24"), get_model("bert24", speed_factor=0.5)
    assert faster.compute_s == pytest.approx(base.compute_s * 0.5)
    assert faster.param_bytes == base.param_bytes
    plan = build_plan("bert24", "p2xd1", speed_factor=0.5)
    assert sum(s.compute_s for s in plan.stages) == pytest.approx(faster.compute_s)


def test_register_model_from_graph_txt(tiny_graph, isolated_zoo):
    profile = register_model("tiny", tiny_graph, speed_factor=2.0)
    assert profile.compute_s == pytest.approx(2 * 0.014)
    assert "tiny" in model_names() and model_family("tiny") == "user"
    plan = build_plan("tiny", "p2xd1")
    assert plan.model == "tiny" and plan.gpus == 2
    with pytest.raises(ConfigError, match="already registered"):
        register_model("tiny", tiny_graph)
    replaced = register_model("tiny", tiny_graph, speed_factor=1.0, replace=True)
    assert replaced.compute_s == pytest.approx(0.014)
    assert sum(s.compute_s for s in build_plan("tiny", "p2xd1").stages) == pytest.approx(0.014)
    with pytest.raises(ConfigError, match="speed_factor must be a positive number"):
        register_model("other", tiny_graph, speed_factor=0.0)


# ---------------------------------------------------------------- configurations and memory

@pytest.mark.parametrize("name, config", [("p2xd4", ParallelConfig(2, 4)), ("p1xd1", ParallelConfig(1, 1)),
                                          ("p16xd2", ParallelConfig(16, 2))])
def test_config_names_round_trip(name, config):
    assert ParallelConfig.parse(name) == config
    assert config.name == name and str(config) == name
    assert ParallelConfig.parse(config) is config
    assert config.gpus == config.stages * config.replicas


@pytest.mark.parametrize("bad", ["2x4", "p0xd4", "p2xd", "P2XD4", "p2xd4 extra"])
def test_bad_config_names(bad):
    with pytest.raises(ConfigError):
        ParallelConfig.parse(bad)


def test_configurations_are_the_factorisations_that_fit():
    assert [c.name for c in configurations("vgg19", 8)] == ["p1xd8", "p2xd4", "p4xd2", "p8xd1"]
    # p = 32 exceeds VGG-19's 26 layers
    assert [c.name for c in configurations("vgg19", 32)] == ["p1xd32", "p2xd16", "p4xd8", "p8xd4", "p16xd2"]
    # T5-3B needs 16 B x 2.85e9 params = 45.6 GB on one GPU
    assert available_gpu_counts("t5") == (2, 4, 8, 16, 32)
    assert "p1xd8" not in [c.name for c in configurations("t5", 8)]


def test_stage_memory_model():
    # 4 x params + (p - s) stashed mini-batches / d
    assert stage_memory_bytes(100.0, 30.0, 0, ParallelConfig(3, 2)) == 400.0 + 3 * 30.0 / 2
    assert stage_memory_bytes(100.0, 30.0, 2, ParallelConfig(3, 2)) == 400.0 + 1 * 30.0 / 2


def test_tiny_memory_rejects_configurations():
    with pytest.raises(ConfigError, match=r"model 'vgg19' has no parallel configuration for 2 GPUs.*0\.5 GB"):
        configurations("vgg19", 2, gpu_memory_gb=0.5)
    # VGG-19 on one GPU needs 4 x 548 MB + 1.98 GB of activations = 4.17 GB
    assert configurations("vgg19", 1, gpu_memory_gb=4.2) == [ParallelConfig(1, 1)]
    with pytest.raises(ConfigError, match="no parallel configuration for 1 GPUs"):
        configurations("vgg19", 1, gpu_memory_gb=4.1)
    with pytest.raises(ConfigError, match="does not fit in 4.1 GB"):
        build_plan("vgg19", "p1xd1", gpu_memory_gb=4.1)


def test_memory_limit_moves_the_partition():
    # compute 1,1,2 with big outputs on layer 0: time-optimal split (2 | 1) stashes layer 0's
    # output twice on stage 0; a tight memory budget forces (1 | 2)
    profile = chain([1.0, 1.0, 2.0], [0.0, 0.0, 0.0], [4e8, 1e8, 1e8], [0.0, 0.0, 0.0])
    config = ParallelConfig(2, 1)
    assert partition(profile, config).bounds == (2, 3)
    tight = partition(profile, config, gpu_memory_gb=0.85)
    assert tight.bounds == (1, 3) and tight.bottleneck_s == pytest.approx(3.0)
    assert partition(profile, config, gpu_memory_gb=0.5) is None


# ---------------------------------------------------------------- stage partition

def test_partition_hand_checked():
    # four 1-second layers, no communication: two stages of two layers
    flat = chain([1.0] * 4, [0.0] * 4, [0.0] * 4, [0.0] * 4)
    result = partition(flat, ParallelConfig(2, 1))
    assert result.bounds == (2, 4) and result.bottleneck_s == pytest.approx(2.0)
    # a 6e11-byte boundary after layer 1 costs 2 * 6e11 / 300e9 = 4 s > 3 s: split after layer 0 instead
    heavy_cut = chain([1.0] * 4, [0.0] * 4, [0.0] * 4, [0.0, 6e11, 0.0, 0.0])
    result = partition(heavy_cut, ParallelConfig(2, 1), gpu_memory_gb=1e6)
    assert result.bounds == (1, 4) and result.bottleneck_s == pytest.approx(3.0)


def brute_force(profile, config, bandwidth, gpu_memory_gb, timing):
    cluster = Cluster(servers=1, gpus_per_server=1, b_intra=bandwidth, b_inter=1.0)
    best = math.inf
    for cuts in itertools.combinations(range(1, profile.num_layers), config.stages - 1):
        bounds = (*cuts, profile.num_layers)
        starts = (0, *cuts)
        fits = all(stage_memory_bytes(sum(layer.param_bytes for layer in profile.layers[a:b]),
                                      sum(layer.output_bytes for layer in profile.layers[a:b]), s, config)
                   <= gpu_memory_gb * 1e9 for s, (a, b) in enumerate(zip(starts, bounds)))
        if fits:
            plan = TrainingPlan("chain", config.name, stages_of(profile, bounds, config.replicas))
            best = min(best, timing.alpha_consolidated(plan, cluster))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_partition_equals_brute_force(seed):
    rng = np.random.default_rng([seed, 2])
    num_layers = int(rng.integers(4, 8))
    profile = chain(rng.uniform(0.0, 1.0, num_layers), rng.uniform(0.0, 2e11, num_layers),
                    rng.uniform(0.0, 1e10, num_layers), rng.uniform(0.0, 1e11, num_layers))
    for stages, replicas, fold, memory in itertools.product((1, 2, 3, 4), (1, 3), (False, True), (1e6, 2e3)):
        timing = TimingModel(fold_p2p_into_stage=fold)
        config = ParallelConfig(stages, replicas)
        found = partition(profile, config, bandwidth_gbps=100.0, gpu_memory_gb=memory, timing=timing)
        expected = brute_force(profile, config, 100.0, memory, timing)
        if found is None:
            assert expected == math.inf
        else:
            assert found.bottleneck_s == pytest.approx(expected, rel=1e-9)


def test_partition_rejects_more_stages_than_layers():
    with pytest.raises(ConfigError, match="has 26 layers, too few for 32 stages"):
        partition(get_model("vgg19"), ParallelConfig(32, 1))


# ---------------------------------------------------------------- plans

@pytest.mark.parametrize("name", ["vgg19", "gnmt", "t5"])
def test_plans_match_their_configuration(name):
    profile = get_model(name)
    for plan in plans_for(name, 8):
        config = ParallelConfig.parse(plan.config)
        assert plan.model == name and plan.gpus == config.gpus == 8
        assert len(plan.stages) == config.stages
        assert all(stage.replicas == config.replicas for stage in plan.stages)
        assert sum(stage.compute_s for stage in plan.stages) == pytest.approx(profile.compute_s)
        assert sum(stage.param_bytes for stage in plan.stages) == pytest.approx(profile.param_bytes)
        assert plan.stages[-1].activation_bytes == 0.0
        # the partition's objective is the timing model's all-intra alpha at 300 GB/s
        found = partition(profile, config)
        assert DEFAULT_TIMING.alpha_consolidated(plan, Cluster(1, 8)) == pytest.approx(found.bottleneck_s)


def test_build_plan_is_deterministic_and_cached():
    first = build_plan("inception_v3", "p4xd2")
    assert build_plan("inception_v3", ParallelConfig(4, 2)) is first
    zoo._clear_caches()
    assert build_plan("inception_v3", "p4xd2") == first


def test_pipelining_bert_balances_its_stages():
    plan = build_plan("bert24", "p8xd1")
    layer_s = get_model("bert24").layers[5].compute_s  # one encoder layer: 8.07 + 13.4 ms
    assert layer_s == pytest.approx(0.02147)
    assert max(stage.compute_s for stage in plan.stages) == pytest.approx(3 * layer_s, rel=0.01)


# ---------------------------------------------------------------- errors

def test_error_messages():
    with pytest.raises(ConfigError, match=r"unknown model 'vgg'; known: \[.*'vgg19'.*\]"):
        get_model("vgg")
    with pytest.raises(ConfigError, match="unknown model 'nope'"):
        build_plan("nope", "p1xd1")
    with pytest.raises(ConfigError, match=r"model 't5' has no parallel configuration for 1 GPUs"):
        plans_for("t5", 1)
    with pytest.raises(ConfigError, match="gpus must be a positive integer"):
        configurations("vgg19", 0)
    with pytest.raises(ConfigError, match="speed_factor must be a positive number, got -1"):
        get_model("vgg19", speed_factor=-1)
    with pytest.raises(ConfigError, match="gpu_memory_gb must be a positive number"):
        build_plan("vgg19", "p1xd1", gpu_memory_gb=0)


def test_zoo_summary_lists_every_fitting_configuration():
    table = zoo_summary(gpus=1)
    assert sorted(table["model"]) == sorted(set(model_names()) - {"t5"})  # T5-3B needs >= 2 GPUs
    assert set(table["config"]) == {"p1xd1"}
    assert (table["alpha_consolidated_s"] == table["compute_s"]).all()
    assert (table["alpha_max_s"] >= table["alpha_consolidated_s"]).all()
