"""Trackers (lang_pz.trackers) as training callbacks and from ``--log``, each offline and read back
from what the real library wrote: TensorBoard event files through tensorboard's own reader, a W&B
offline run through its transaction log (``run-ID.wandb``, LevelDB's log format holding W&B's
protobuf records). Runs are small real runs with the scripted stand-in (tests/viewer_runs.py)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from typer.testing import CliRunner
from viewer_runs import small_run

from lang_pz.cli import app
from lang_pz.runs import RunFolder, read_policies
from lang_pz.trackers import make_tracker, open_trackers
from lang_pz.trackers.base import tag
from lang_pz.trajectory import read_trajectories


def metrics_of(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in RunFolder(run_dir).metrics.read_text().splitlines()]


def tensorboard_events(log_dir: Path):
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    acc = accumulator.EventAccumulator(str(log_dir), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    return acc


def scalar_series(acc, tag: str) -> list[tuple[int, float]]:
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def texts(acc, tag: str) -> list[tuple[int, str]]:
    return [(e.step, e.tensor_proto.string_val[0].decode()) for e in acc.Tensors(f"{tag}/text_summary")]


def test_tensorboard_gets_the_learning_curve_usage_and_policies(tmp_path):
    pytest.importorskip("tensorboardX")
    log_dir = tmp_path / "tb"
    with open_trackers([f"tensorboard:{log_dir}"], {"env_id": "butterfly/pistonball-v0"}) as trackers:
        run = small_run(tmp_path / "run", callbacks=tuple(trackers.trackers))
    acc = tensorboard_events(log_dir)
    metrics = metrics_of(run)
    assert scalar_series(acc, "iteration/train_return") == [
        (m["iteration"], pytest.approx(m["train_return"])) for m in metrics
    ]
    assert scalar_series(acc, "iteration/test_return") == [
        (m["iteration"], pytest.approx(m["test_return"])) for m in metrics
    ]
    # accepted is None for an iteration without a candidate (no agent blamed): not a number, not logged
    assert [v for _, v in scalar_series(acc, "iteration/accepted")] == [
        float(m["accepted"]) for m in metrics if m["accepted"] is not None
    ]
    assert [v for _, v in scalar_series(acc, "usage/actor/calls")] == [m["usage"]["actor"]["calls"] for m in metrics]
    episodes = read_trajectories(RunFolder(run).iteration(0).trajectories)
    assert scalar_series(acc, "episode/team_return")[0] == (1, pytest.approx(episodes[0].team_return))
    after_first = read_policies(RunFolder(run).iteration(1).policies)  # the policies after iteration 0's update
    assert texts(acc, "policy/piston_1")[0] == (0, after_first["piston_1"])
    assert json.loads(texts(acc, "config")[0][1]) == {"env_id": "butterfly/pistonball-v0"}


def wandb_records(run_folder: Path) -> list:
    """Every protobuf record of a W&B offline run's transaction log (LevelDB log format: 32 KiB
    blocks of chunks, each ``crc32c (4) length (2) type (1)`` then data; type 1 = a whole record,
    2/3/4 = its first/middle/last part)."""
    pb = pytest.importorskip("wandb.proto.wandb_internal_pb2")
    (path,) = run_folder.glob("*.wandb")
    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, block, out, parts = 7, 32768, [], b""
    while pos + 7 <= len(data):
        if block - pos % block < 7:  # a block's tail too short for a chunk header is padding
            pos += block - pos % block
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        parts += data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):
            record = pb.Record()
            record.ParseFromString(parts)
            out.append(record)
            parts = b""
    return out


def test_wandb_offline_run_holds_the_metrics_and_policy_tables(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_MODE", "offline")
    for var in ("WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR"):  # nothing in $HOME
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    with open_trackers([f"wandb:offline:{tmp_path / 'wb'}"], {"seed": 0}) as trackers:
        run = small_run(tmp_path / "run", callbacks=tuple(trackers.trackers))
        trackers.finish(
            type("Result", (), {"metrics": metrics_of(tmp_path / "run"), "final_policies": {}, "final_test_return": 1.5})()
        )
    import wandb

    wandb.teardown()  # waits for W&B's service process to write the rest of the run's log
    (folder,) = (tmp_path / "wb" / "wandb").glob("offline-run-*")
    rows = [
        {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in r.history.item}
        for r in wandb_records(folder)
        if r.WhichOneof("record_type") == "history"
    ]
    metrics = metrics_of(run)
    curve = [(r["iteration"], r["iteration/test_return"]) for r in rows if "iteration/test_return" in r]
    assert curve == [(m["iteration"], pytest.approx(m["test_return"])) for m in metrics]
    assert [r["usage/critic/calls"] for r in rows if "usage/critic/calls" in r] == [
        m["usage"]["critic"]["calls"] for m in metrics
    ]
    assert [r["final/test_return"] for r in rows if "final/test_return" in r] == [1.5]
    tables = sorted((folder / "files" / "media" / "table" / "policy").glob("piston_1_*.table.json"))
    logged = {json.loads(t.read_text())["data"][0][1] for t in tables}
    assert read_policies(RunFolder(run).iteration(1).policies)["piston_1"] in logged


def test_bench_log_from_the_command_line(tmp_path):
    pytest.importorskip("tensorboardX")
    out, log_dir = tmp_path / "bench", tmp_path / "tb"
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "--out",
            str(out),
            "--env",
            "butterfly/pistonball-v0",
            "--kw",
            "n_pistons=5",
            "--kw",
            "hold=5",
            "--kw",
            "max_cycles=30",
            "--team",
            "random",
            "--seeds",
            "0-1",
            "--no-plot",
            "--log",
            f"tensorboard:{log_dir}",
        ],
    )
    assert result.exit_code == 0, result.output
    acc = tensorboard_events(log_dir)
    episodes = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    (row,) = json.loads((out / "summary.json").read_text())
    prefix = tag("bench", row["env"], "random")
    assert "(" in row["env"] and "(" not in prefix
    assert scalar_series(acc, f"{prefix}/value") == [(e["seed"], pytest.approx(e["value"])) for e in episodes]
    assert scalar_series(acc, f"{prefix}/mean") == [(0, pytest.approx(row["mean"]))]
    assert "| random |" in texts(acc, "bench/results")[0][1]


def test_bad_log_specs_are_refused_before_training(tmp_path):
    with pytest.raises(ValueError, match="tensorboard:DIR"):
        make_tracker("tensorboard")
    with pytest.raises(ValueError, match="mlflow:DIR"):
        make_tracker("mlflow")
    with pytest.raises(ValueError, match="offline or online"):
        make_tracker("wandb:sometimes")
    result = CliRunner().invoke(app, ["train", "--run-dir", str(tmp_path / "run"), "--log", "neptune:x"])
    assert result.exit_code == 2 and "is not a tracker" in result.output
    assert not (tmp_path / "run").exists()


def test_mlflow_file_store_holds_the_learning_curve_usage_policies_and_config(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_DISABLE_TELEMETRY", raising=False)
    pytest.importorskip("mlflow.tracking")
    from mlflow.telemetry.utils import is_telemetry_disabled
    from mlflow.tracking import MlflowClient

    store = tmp_path / "mlruns"
    with open_trackers([f"mlflow:{store}"], {"env_id": "butterfly/pistonball-v0", "seed": 0}) as trackers:
        run = small_run(tmp_path / "run", callbacks=tuple(trackers.trackers))
        (tracker,) = trackers.trackers
        trackers.finish(type("Result", (), {"metrics": metrics_of(run), "final_policies": {}, "final_test_return": 1.5})())
    assert is_telemetry_disabled()  # nothing leaves the machine
    client = MlflowClient(tracking_uri=store.resolve().as_uri())
    (logged,) = client.search_runs([client.get_experiment_by_name("lang_pz").experiment_id])
    assert logged.info.run_id == tracker.run_id and logged.info.status == "FINISHED"
    assert logged.data.params == {"env_id": "butterfly/pistonball-v0", "seed": "0"}
    metrics = metrics_of(run)

    def history(key: str) -> list[tuple[int, float]]:
        return sorted((m.step, m.value) for m in client.get_metric_history(tracker.run_id, key))

    assert history("iteration/test_return") == [(m["iteration"], pytest.approx(m["test_return"])) for m in metrics]
    assert history("usage/actor/calls") == [(m["iteration"], m["usage"]["actor"]["calls"]) for m in metrics]
    assert history("final/test_return") == [(len(metrics), 1.5)]
    episodes = read_trajectories(RunFolder(run).iteration(0).trajectories)
    assert history("episode/team_return")[0] == (1, pytest.approx(episodes[0].team_return))
    artifacts = Path(client.download_artifacts(tracker.run_id, "policy/piston_1", str(tmp_path / "dl")))
    after_first = read_policies(RunFolder(run).iteration(1).policies)
    assert (artifacts / "iteration_0.txt").read_text() == after_first["piston_1"]
