from __future__ import annotations

import pytest

from assessor import load_run
from assessor.ingest.nvidia_smi import READER

WITH_UNITS = """timestamp, index, name, utilization.gpu [%], memory.used [MiB], power.draw [W], temperature.gpu
2024/09/08 13:03:31.000, 0, NVIDIA A100-SXM4-80GB, 95 %, 70000 MiB, 350.12 W, 61
2024/09/08 13:03:31.000, 1, NVIDIA A100-SXM4-80GB, 12 %, 60000 MiB, [N/A], 55
2024/09/08 13:03:36.000, 0, NVIDIA A100-SXM4-80GB, 97 %, 70100 MiB, 355.00 W, 62
2024/09/08 13:03:36.000, 1, NVIDIA A100-SXM4-80GB, 14 %, 60100 MiB, 120.50 W, 56
"""

NO_UNITS = """timestamp, utilization.gpu [%], memory.used [MiB], power.draw [W]
2024/09/08 13:03:31.500, 95, 70000, 350.12
2024/09/08 13:03:32.000, 40, 70000, 150.00
2024/09/08 13:03:32.5"""


def test_several_gpus_with_units_and_missing_cells(tmp_path):
    path = tmp_path / "gpu.csv"
    path.write_text(WITH_UNITS, encoding="utf-8")
    data = READER.read(path)
    gpu = data.gpu
    assert gpu is not None
    power = gpu[gpu["field"] == "power_w"]
    assert sorted(zip(power["device"], power["value"], strict=True)) == [(0, 350.12), (0, 355.0), (1, 120.5)]
    util = gpu[(gpu["field"] == "gpu_util_pct") & (gpu["device"] == 0)]
    assert util["value"].tolist() == [95.0, 97.0]
    assert util["time"].diff().iloc[-1] == pytest.approx(5.0)
    assert data.gpu_devices == {0: "NVIDIA A100-SXM4-80GB", 1: "NVIDIA A100-SXM4-80GB"}


def test_nounits_single_gpu_and_a_partial_last_line(tmp_path):
    path = tmp_path / "smi.csv"
    path.write_text(NO_UNITS, encoding="utf-8")
    data = READER.read(path)
    assert data.gpu is not None
    assert sorted(set(data.gpu["device"])) == [0]
    assert data.gpu[data.gpu["field"] == "gpu_util_pct"]["value"].tolist() == [95.0, 40.0]
    assert any("incomplete" in w for w in data.warnings)


def test_gpu_log_beside_metrics_is_reported_in_the_run(tmp_path):
    (tmp_path / "gpu.csv").write_text(WITH_UNITS, encoding="utf-8")
    (tmp_path / "log.jsonl").write_text('{"step": 1, "reward": 0.5}\n', encoding="utf-8")
    run = load_run(tmp_path)
    assert run.gpu is not None and len(run.gpu) > 0
    assert run.series("reward_mean").to_dict() == {1: 0.5}
