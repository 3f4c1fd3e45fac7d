"""The accelerator a model backend runs on: the one home of how the generators, the judges and
the question writer pick a device, name it in their records, and wait for its queued work."""

from __future__ import annotations

import torch


def pick_device(device: str = "auto") -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def device_name(device: torch.device) -> str:
    """The device's model as a judgment or cost records it ("NVIDIA H200"), or its type."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else device.type


def synchronize(device: torch.device) -> None:
    """Wait for queued kernels, so a wall-clock interval covers the work (no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
