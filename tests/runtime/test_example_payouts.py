"""examples/payouts runs offline end to end (copied, so its runs are stored in tmp): the filter skips the claim
no manager approved, a note the validator rejects is asked again, and only the payout over 100 EUR waits for a
person, whose approve_same answer is kept when the run resumes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from plait.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "payouts"


def test_payouts_runs_offline_and_asks_only_for_the_large_payout(tmp_path, capsys, monkeypatch):
    shutil.copytree(EXAMPLE, tmp_path / "payouts")
    monkeypatch.chdir(tmp_path / "payouts")
    assert main(["run", "payouts.plait", "--input-file", "claims.json", "--json"]) == 3
    stopped = json.loads(capsys.readouterr().out)
    [pending] = stopped["pending"]
    assert pending["tool"] == "pay" and pending["arguments"] == {"to": "Bo", "amount": 240}
    assert [w["code"] for w in stopped["warnings"]].count("output_rejected_retried") == 1
    decide = f"{pending['id']}=approve_same"
    assert main(["resume", stopped["run_id"], "--decide", decide, "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["output"] == "Paid Ann 12.5 EUR and Bo 240 EUR."
    skipped = [d for d in done["decisions"] if d["kind"] == "map" and d.get("status") == "skipped"]
    assert [d["index"] for d in skipped] == [2]
