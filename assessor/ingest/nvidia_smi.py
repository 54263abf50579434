"""GPU telemetry logged with `nvidia-smi --query-gpu=... --format=csv [-l N]`.

One row per GPU per sample, fields separated by ", ", header names carrying a bracketed unit
(`power.draw [W]`), values carrying units unless `nounits` was given, missing values as `[N/A]`.
We key on header names, never on column positions (NVIDIA does not keep them stable).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from assessor.errors import UnreadableSourceError
from assessor.ingest.base import SourceData, empty_raw_frame
from assessor.ingest.csv_log import read_rows

FIELD_NAMES = {
    "utilization.gpu": "gpu_util_pct",
    "utilization.memory": "mem_util_pct",
    "memory.used": "memory_used_mib",
    "memory.total": "memory_total_mib",
    "memory.free": "memory_free_mib",
    "power.draw": "power_w",
    "power.draw.average": "power_w",
    "power.draw.instant": "power_instant_w",
    "power.limit": "power_limit_w",
    "enforced.power.limit": "power_limit_w",
    "temperature.gpu": "temperature_c",
    "clocks.sm": "sm_clock_mhz",
    "clocks.current.sm": "sm_clock_mhz",
    "clocks.mem": "mem_clock_mhz",
    "clocks.current.memory": "mem_clock_mhz",
    "fan.speed": "fan_pct",
}
_NOT_FIELDS = {"timestamp", "index", "name", "uuid", "pci.bus_id", "pstate", "driver_version", "serial"}
_UNIT = re.compile(r"\s*\[[^\]]*\]\s*$")
_NUMBER = re.compile(r"^\s*(-?[0-9.]+(?:[eE][-+]?\d+)?)")


def _header_name(raw: str) -> str:
    return _UNIT.sub("", raw.strip()).strip().lower()


class NvidiaSmiReader:
    """Reads nvidia-smi CSV query logs."""

    name = "nvidia_smi"

    def sniff(self, path: Path, head: bytes) -> bool:
        """A text file whose first line is an nvidia-smi query header."""
        first = head.split(b"\n", 1)[0].decode("utf-8", errors="replace").lower()
        return "utilization.gpu" in first or ("memory.used" in first and "timestamp" in first) \
            or ("power.draw" in first and "," in first)

    def read(self, path: Path) -> SourceData:
        """Read the log into a long telemetry frame (`time`, `device`, `field`, `value`)."""
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            raise UnreadableSourceError(f"{path}: cannot be read ({error.strerror}); check its permissions") from error
        rows = [r for r in read_rows(text, skipinitialspace=True)[0] if r]
        if len(rows) < 2:
            raise UnreadableSourceError(f"{path}: nvidia-smi header but no samples yet; let it log for a while")
        header = [_header_name(c) for c in rows[0]]
        width = len(header)
        body = rows[1:]
        warnings: list[str] = []
        if len(body[-1]) < width and not text.endswith("\n"):
            warnings.append(f"{path.name}: last line is incomplete (nvidia-smi may still be writing); ignored it")
            body.pop()
        repeated_headers = sum(1 for r in body if _header_name(r[0]) == header[0])
        body = [r for r in body if len(r) == width and _header_name(r[0]) != header[0]]
        if not body:
            raise UnreadableSourceError(f"{path}: no complete nvidia-smi samples; let it log for a while")
        columns = list(zip(*body, strict=True))
        if "timestamp" not in header:
            raise UnreadableSourceError(
                f"{path}: no timestamp column; log with --query-gpu=timestamp,index,... so samples can be placed "
                "in time"
            )
        stamps = pd.to_datetime(pd.Series(columns[header.index("timestamp")]).str.strip(),
                                format="%Y/%m/%d %H:%M:%S.%f", errors="coerce")
        # Local wall-clock time without a zone, as nvidia-smi prints it; seconds since the epoch "as if UTC".
        time = (stamps - pd.Timestamp(0)).dt.total_seconds().to_numpy()
        valid_time = stamps.notna().to_numpy()
        device = (np.array([int(x) if x.strip().isdigit() else 0 for x in columns[header.index("index")]])
                  if "index" in header else np.zeros(len(body), dtype=int))
        names: dict[int, str] = {}
        if "name" in header:
            for dev, name in zip(device, columns[header.index("name")], strict=True):
                names.setdefault(int(dev), name.strip())
        frames = []
        for i, field in enumerate(header):
            if field in _NOT_FIELDS:
                continue
            values = np.array([_cell(x) for x in columns[i]], dtype=np.float64)
            keep = valid_time & np.isfinite(values)
            if not keep.any():
                continue
            frames.append(pd.DataFrame({
                "time": time[keep], "device": device[keep], "field": FIELD_NAMES.get(field, field),
                "value": values[keep],
            }))
        if not frames:
            raise UnreadableSourceError(f"{path}: no numeric GPU fields; query utilization.gpu,memory.used,power.draw")
        gpu = pd.concat(frames, ignore_index=True)
        gpu = gpu.drop_duplicates(subset=["time", "device", "field"], keep="last")
        if repeated_headers:
            warnings.append(f"{path.name}: {repeated_headers} repeated header lines (nvidia-smi restarted); skipped")
        bad_times = int((~valid_time).sum())
        if bad_times:
            warnings.append(f"{path.name}: {bad_times} samples with an unreadable timestamp were skipped")
        return SourceData(path=path, format="nvidia_smi", frame=empty_raw_frame(), warnings=warnings,
                          gpu=gpu, gpu_devices=names)


def _cell(text: str) -> float:
    match = _NUMBER.match(text)
    return float(match.group(1)) if match else np.nan


READER = NvidiaSmiReader()
