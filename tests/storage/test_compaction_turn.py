"""Worker processes over one data dir compact its shared tables one at a time: a maintenance
child that finds another holding the compaction turn skips that pass's compaction."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memgraph_plugin.storage.maintenance_worker import _compaction_turn

ROOT = Path(__file__).resolve().parents[2]
ASK = (
    "import sys\n"
    "from memgraph_plugin.storage.maintenance_worker import _compaction_turn\n"
    "with _compaction_turn(sys.argv[1]) as ours:\n"
    "    print(ours)\n"
)


def _other_process_gets_it(uri: str) -> bool:
    out = subprocess.run(
        [sys.executable, "-c", ASK, uri], capture_output=True, text=True, cwd=ROOT, timeout=120,
        check=True,
    )  # fmt: skip
    return out.stdout.strip() == "True"


def test_one_process_at_a_time_compacts_a_local_database(tmp_path: Path) -> None:
    uri = str(tmp_path / "lancedb")
    with _compaction_turn(uri) as ours:
        assert ours
        assert not _other_process_gets_it(uri)  # the turn is held here
    assert _other_process_gets_it(uri)  # and free once this process is done


def test_a_remote_database_always_gets_its_turn() -> None:
    with _compaction_turn("s3://bucket/prefix") as ours:
        assert ours
        assert _other_process_gets_it("s3://bucket/prefix")
