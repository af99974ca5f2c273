"""Stopping a test's child process: SIGTERM, a grace period, then SIGKILL."""

from __future__ import annotations

import subprocess


def stop_process(proc: subprocess.Popen, grace: float = 30) -> None:
    """End `proc` if it runs: SIGTERM and up to `grace` seconds to exit, then SIGKILL."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)
