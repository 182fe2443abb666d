"""Tracing is configured the standard way: `--otel` or an OTLP endpoint turns it on, OTEL_SDK_DISABLED turns it off,
and asking for it without the extra installed is a one-line usage error, not a traceback."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from plait.cli import main
from plait.runtime.tracing import INSTALL_HINT, missing, requested

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_flag_or_an_endpoint_turns_tracing_on_and_the_sdk_switch_turns_it_off():
    assert not requested(False, {})
    assert requested(True, {})
    assert requested(False, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert requested(False, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"})
    assert not requested(False, {"OTEL_EXPORTER_OTLP_ENDPOINT": "  "})
    assert not requested(True, {"OTEL_SDK_DISABLED": "true"})
    assert not requested(False, {"OTEL_SDK_DISABLED": "TRUE", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})


def test_the_extra_is_found_when_installed():
    assert missing() is None


def test_otel_without_the_extra_is_a_one_line_usage_error(tmp_path, monkeypatch, capsys):
    shutil.copytree(EXAMPLES / "briefing", tmp_path / "briefing")
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk", None)  # as if plait[otel] were not installed
    assert missing() == INSTALL_HINT
    code = main(["run", str(tmp_path / "briefing" / "briefing.plait"), "--input", "x", "--otel"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"plait: {INSTALL_HINT}\n"


def test_an_endpoint_in_the_environment_without_the_extra_warns_and_runs_untraced(tmp_path, monkeypatch, capsys):
    shutil.copytree(EXAMPLES / "briefing", tmp_path / "briefing")
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk", None)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    code = main(["run", str(tmp_path / "briefing" / "briefing.plait"), "--input", "the Lisbon office move"])
    out, err = capsys.readouterr()
    assert code == 0 and "Lisbon" in out
    assert "the run is not traced" in err and "Traceback" not in err
