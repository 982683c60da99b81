"""`hydra/launcher=ray`: a 4-point sweep on a Ray instance started on this machine lands exactly where
and what the basic launcher writes, and says so in one plain line per point; on a two-node cluster
started with `ray start` and Ray's token authentication, it does the same with the token and is refused
without it."""

from __future__ import annotations

import importlib
import logging
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

from asrpt_bench import io
from test_signals import session_members

pytest.importorskip("ray", reason="Ray is not installed here (no Ray wheel for this platform or Python); "
                                  "pip install -e '.[ray]'")

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ["-m", "debug=tiny", "workload=synthetic", "task=simulate", "seed=0,1", "scheduler.tau=0,2"]


def sweep(tmp_path: Path, name: str, *launcher: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**(os.environ if env is None else env), "PYTHONPATH": str(ROOT), "HYDRA_FULL_ERROR": "0",
           "RAY_USAGE_STATS_ENABLED": "0"}
    return subprocess.run([sys.executable, "-m", "asrpt_bench.cli", *SWEEP, *launcher,
                           f"hydra.sweep.dir={tmp_path / name}", f"cache.dir={tmp_path / 'cache'}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def point_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


POINT_LINE = re.compile(r"\t\[(\d+)/(\d+)\] #(\d+) : (.*) : (COMPLETED|skipped \(complete\)|FAILED.*)$")


def assert_plain_one_line_per_point(output: str, points: int, outcome: str = "COMPLETED") -> None:
    """What a sweep printed through a pipe: no ANSI codes, no Ray token warning, no forwarded worker
    lines, exactly one line per point saying `outcome` with how many points have finished, and the
    sweeper's count of the outcomes."""
    from hydra_plugins.asrpt_ray_launcher.ray_launcher import RAY_AUTH_ENABLED_WARNING

    assert "\x1b" not in output, output[-2000:]
    assert RAY_AUTH_ENABLED_WARNING not in output
    assert "pid=" not in output, output[-2000:]  # Ray's "(run_point pid=...)" prefix of forwarded lines
    lines = [match for match in map(POINT_LINE.search, output.splitlines()) if match]
    assert sorted(int(match[3]) for match in lines) == list(range(points)), output[-2000:]
    assert [(int(match[1]), int(match[2])) for match in lines] == [(k, points) for k in range(1, points + 1)]
    assert all(match[5] == outcome for match in lines), output[-2000:]
    counts = {"COMPLETED": (points, 0), "skipped (complete)": (0, points)}[outcome]
    assert (f"sweep: {points} of {points} points done: {counts[0]} complete, {counts[1]} skipped (complete), "
            "0 failed") in output, output[-2000:]


def test_ray_log_filter_drops_the_token_warning_and_strips_colour_off_a_terminal() -> None:
    from hydra_plugins.asrpt_ray_launcher.ray_launcher import RAY_AUTH_ENABLED_WARNING, _PlainRayLog

    def record(message: str, *args: object) -> logging.LogRecord:
        return logging.LogRecord("ray._private.worker", logging.INFO, __file__, 1, message, args, None)

    plain, terminal = _PlainRayLog(plain=True), _PlainRayLog(plain=False)
    warning = record(RAY_AUTH_ENABLED_WARNING + ". Set RAY_AUTH_MODE=disabled to opt out.")
    assert not plain.filter(warning) and not terminal.filter(warning)
    coloured = record("Connected to Ray cluster. View the dashboard at %s%s%s", "\x1b[1m\x1b[32m", "http://h:8265",
                      "\x1b[39m\x1b[22m")
    assert plain.filter(coloured)
    assert coloured.getMessage() == "Connected to Ray cluster. View the dashboard at http://h:8265"
    kept = record("Connected %s", "\x1b[32mthere\x1b[0m")
    assert terminal.filter(kept) and kept.getMessage() == "Connected \x1b[32mthere\x1b[0m"


def test_points_are_reported_one_line_each_as_they_finish_and_returned_in_sweep_order(
        caplog: pytest.LogCaptureFixture) -> None:
    from hydra.core.utils import JobReturn, JobStatus
    from hydra_plugins.asrpt_ray_launcher import ray_launcher

    done = JobReturn(status=JobStatus.COMPLETED)
    failed = JobReturn(status=JobStatus.FAILED, _return_value=ValueError("bad point\ntraceback in FAILED"))

    class FinishingBackwards:  # stands in for ray: the last point submitted finishes first
        exceptions = type("exceptions", (), {"RayError": RuntimeError})

        def wait(self, refs: list[str], num_returns: int) -> tuple[list[str], list[str]]:
            return refs[-1:], refs[:-1]

        def get(self, ref: str) -> JobReturn:
            return {"a": done, "b": failed}[ref]

    with caplog.at_level(logging.INFO, logger=ray_launcher.log.name):
        results = ray_launcher._gather(FinishingBackwards(), [("a", None), ("b", None)], [["seed=0"], ["seed=1"]], 3)
    assert results == [done, failed]
    assert [r.getMessage() for r in caplog.records if r.name == ray_launcher.log.name] == [
        "\t[1/2] #4 : seed=1 : FAILED (ValueError: bad point)", "\t[2/2] #3 : seed=0 : COMPLETED"]


@pytest.mark.slow
def test_ray_sweep_matches_the_basic_launcher_point_for_point(tmp_path: Path) -> None:
    basic = sweep(tmp_path, "basic")
    assert basic.returncode == 0, basic.stderr[-2000:]
    ray = sweep(tmp_path, "ray", "hydra/launcher=ray", "hydra.launcher.num_cpus=2")
    assert ray.returncode == 0, ray.stderr[-2000:]
    assert "Ray launcher: 4 points" in ray.stderr + ray.stdout
    assert_plain_one_line_per_point(ray.stderr + ray.stdout, 4)  # captured: stderr is a pipe
    basic_points, ray_points = point_dirs(tmp_path / "basic"), point_dirs(tmp_path / "ray")
    assert [p.name for p in ray_points] == [p.name for p in basic_points] and len(ray_points) == 4
    for ours, theirs in zip(ray_points, basic_points):
        assert io.run_status(ours) == "complete", io.read_failure(ours)
        assert (ours / io.JOBS).read_bytes() == (theirs / io.JOBS).read_bytes()
        assert io.read_summary(ours)["config_hash"] == io.read_summary(theirs)["config_hash"]
    stamps = [(p / io.SUMMARY).stat().st_mtime_ns for p in ray_points]
    again = sweep(tmp_path, "ray", "hydra/launcher=ray", "hydra.launcher.num_cpus=2")
    assert again.returncode == 0, again.stderr[-2000:]
    assert [(p / io.SUMMARY).stat().st_mtime_ns for p in ray_points] == stamps  # every point skipped
    assert_plain_one_line_per_point(again.stderr + again.stdout, 4, "skipped (complete)")  # and says so


# --------------------------------------------------------------------------------------------------
# A cluster started with `ray start` (head + a second node on this machine) with token authentication


RAY_CLI = [sys.executable, "-m", "ray.scripts.scripts"]
AUTH_ENV = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS")


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def stop_node(process: subprocess.Popen) -> None:
    """Stop one `ray start --block` and every process it started, and only those: SIGTERM (it shuts its
    node down), then SIGKILL whatever is left in its session. (`ray stop --force` would kill every Ray
    process of the machine, other users' and other test runs' included.)"""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
    deadline = time.monotonic() + 15
    while (left := session_members(process.pid)) and time.monotonic() < deadline:
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.2)
    if process.poll() is None:
        process.kill()
        process.wait(timeout=10)


def node_count(env: dict[str, str], address: str) -> int:
    """Nodes `ray status` lists as active (0 if it cannot reach the cluster)."""
    status = subprocess.run([*RAY_CLI, "status", f"--address={address}"], env=env, capture_output=True,
                            text=True, timeout=60)
    active = status.stdout.split("Active:", 1)[-1].split("Pending:", 1)[0] if "Active:" in status.stdout else ""
    return len(re.findall(r"^\s*1 node_[0-9a-f]+", active, flags=re.M))


@pytest.fixture
def token_cluster(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], Path]]:
    """(head address, environment with the token, temp root) of a two-node Ray cluster on this machine,
    every node and the client authenticating with one token in a file (RAY_AUTH_MODE=token,
    RAY_AUTH_TOKEN_PATH); both nodes are stopped, with everything they started, whatever happens."""
    if not hasattr(importlib.import_module("ray._raylet"), "AuthenticationTokenLoader"):
        pytest.skip(f"Ray {importlib.import_module('ray').__version__} has no token authentication (Ray >= 2.52)")
    root = Path(tempfile.mkdtemp(prefix="asrpt-ray-", dir="/tmp"))  # short: Ray's socket paths are limited
    token = root / "auth_token"
    token.write_text(secrets.token_hex(32))
    token.chmod(0o600)
    base = {key: value for key, value in os.environ.items() if key not in AUTH_ENV}
    env = {**base, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token), "RAY_USAGE_STATS_ENABLED": "0",
           "PYTHONPATH": str(ROOT)}
    gcs, head_agent, worker_agent = free_ports(3)
    address = f"127.0.0.1:{gcs}"
    nodes: list[subprocess.Popen] = []

    def start(name: str, *args: str) -> subprocess.Popen:
        with open(root / f"{name}.log", "w") as log_file:
            nodes.append(subprocess.Popen([*RAY_CLI, "start", "--block", "--num-cpus=1", "--node-ip-address=127.0.0.1",
                                           f"--temp-dir={root / name}", "--disable-usage-stats", *args],
                                          env=env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True))
        return nodes[-1]

    def wait_for(nodes_up: int, process: subprocess.Popen, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            if node_count(env, address) >= nodes_up:
                return True
            time.sleep(1)
        return False

    try:
        head = start("head", "--head", f"--port={gcs}", "--include-dashboard=false",
                     f"--dashboard-agent-listen-port={head_agent}")
        if not wait_for(1, head, 120):
            pytest.skip(f"`ray start --head` cannot start here: {(root / 'head.log').read_text()[-1500:]}")
        worker = start("worker", f"--address={address}", f"--dashboard-agent-listen-port={worker_agent}")
        assert wait_for(2, worker, 120), (root / "worker.log").read_text()[-3000:]
        yield address, env, root
    finally:
        for node in reversed(nodes):
            stop_node(node)
        shutil.rmtree(root, ignore_errors=True)


def points_run_on(node_temp_dir: Path) -> set[str]:
    """Sweep points a node ran: the run directories its workers printed (in its session's worker logs)."""
    return {match for log in node_temp_dir.glob("session_*/logs/worker-*.out")
            for match in re.findall(r"^run directory: (.+)$", log.read_text(errors="replace"), flags=re.M)}


@pytest.mark.slow
def test_ray_sweep_on_a_two_node_token_cluster_matches_the_basic_launcher(
        tmp_path: Path, token_cluster: tuple[str, dict[str, str], Path]) -> None:
    address, env, root = token_cluster
    basic = sweep(tmp_path, "basic")
    assert basic.returncode == 0, basic.stderr[-2000:]
    ray = sweep(tmp_path, "ray", "hydra/launcher=ray", f"hydra.launcher.address={address}", env=env)
    output = ray.stderr + ray.stdout
    assert ray.returncode == 0, output[-3000:]
    assert f"Ray launcher: 4 points on {address} (token authentication on)" in output
    assert_plain_one_line_per_point(output, 4)
    basic_points, ray_points = point_dirs(tmp_path / "basic"), point_dirs(tmp_path / "ray")
    assert [p.name for p in ray_points] == [p.name for p in basic_points] and len(ray_points) == 4
    for ours, theirs in zip(ray_points, basic_points):
        assert io.run_status(ours) == "complete", io.read_failure(ours)
        assert (ours / io.JOBS).read_bytes() == (theirs / io.JOBS).read_bytes()
    on_head, on_worker = points_run_on(root / "head"), points_run_on(root / "worker")
    printed = {str(p.relative_to(tmp_path)) for p in ray_points}  # relative to the sweep's working directory
    assert on_head | on_worker == printed and not on_head & on_worker, (on_head, on_worker)
    assert on_head and on_worker, (on_head, on_worker)  # both nodes ran points

    # The same client without the token is refused by the cluster and runs nothing
    no_token = {key: value for key, value in env.items() if key not in AUTH_ENV}
    refused = sweep(tmp_path, "refused", "hydra/launcher=ray", f"hydra.launcher.address={address}", env=no_token)
    assert refused.returncode != 0
    assert "Authentication token is missing or incorrect" in refused.stderr + refused.stdout
    assert not (tmp_path / "refused").exists() or point_dirs(tmp_path / "refused") == []
