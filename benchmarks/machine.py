"""What machine a benchmark ran on, for the result tables."""

from __future__ import annotations

import os
import platform
from pathlib import Path

__all__ = ["cpu_model", "memory_gib", "describe"]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def memory_gib() -> float | None:
    try:
        return int(Path("/proc/meminfo").read_text().split()[1]) / 2**20
    except (OSError, ValueError, IndexError):
        return None


def describe(*extras: str) -> str:
    """``2 cores (Intel Xeon), 24 GiB RAM, Python 3.11.7, Linux`` plus any extras."""
    mem = memory_gib()
    parts = [f"{os.cpu_count()} cores ({cpu_model()})", f"{mem:.0f} GiB RAM" if mem else "RAM unknown",
             f"Python {platform.python_version()}", f"{platform.system()} {platform.machine()}", *extras]
    return ", ".join(parts)
