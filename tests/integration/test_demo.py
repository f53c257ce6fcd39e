"""The README's demo runs end to end (train, resume, evaluate, predict, export)."""

import subprocess
import sys
from pathlib import Path

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.py"


def test_demo_trains_evaluates_and_exports(tmp_path):
    result = subprocess.run(
        [sys.executable, str(DEMO), "--model-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "evaluation on 30 held-out flowers" in result.stdout
    assert (tmp_path / "model.ckpt-1000.index").exists()
    assert list((tmp_path / "export" / "demo").glob("*/saved_model.pb"))
