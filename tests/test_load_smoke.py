"""Issue #16's load, soak and live-session test (benchmarks/load_test.py) at tiny scale against the real app."""

import json

import pytest
from app_fixtures import launch_app

from benchmarks import load_test
from demo.models import BUNDLED


@pytest.fixture(scope="module")
def app():
    if not list(BUNDLED.glob("*/*/config.json")):
        pytest.fail(f"no bundled models under {BUNDLED}; train them with 'attention-lab zoo'")
    proc, url = launch_app()
    load_test.drain(proc)
    yield proc, url
    proc.terminate()
    proc.wait(timeout=30)


def test_tiny_load_soak_and_live_sessions(app, tmp_path):
    proc, url = app
    result = load_test.run_load(url, clients=2, requests_each=2, seconds=60)
    result["soak"] = load_test.run_soak(url, proc.pid, total=30, clients=2, every=10, baseline=10, seconds=60)
    result["live"] = load_test.run_live(url, sessions=2, steps=100, seconds=60, lengths=(2, 4))

    assert set(load_test.LOAD_KEYS) <= result.keys()
    assert (result["ok"], result["errors"], result["unsent"]) == (4, 0, 0), result["error_examples"]
    assert result["p50_ms"] <= result["p95_ms"] <= result["max_ms"]

    soak = result["soak"]
    assert (soak["requests"], soak["ok"], soak["errors"]) == (30, 30, 0), soak["error_examples"]
    assert [n for n, _ in soak["rss_series_mb"]] == [0, 10, 20, 30]
    assert all(mb > 50 for _, mb in soak["rss_series_mb"])  # the app with torch and gradio loaded
    assert soak["rss_baseline"]["after_requests"] == 10 and soak["rss_final"]["after_requests"] == 30
    assert soak["rss_ratio"] == round(soak["rss_final"]["mb"] / soak["rss_baseline"]["mb"], 3)

    live = result["live"]
    assert live["finished"] == 2 and live["session_errors"] == 0, live["session_records"]
    assert 1 <= live["most_running_at_once"] <= live["designed_limit"]
    assert all(r["updates"] == 2 and r["last_status"].startswith("step 100/100") for r in live["session_records"])
    assert live["probe"]["requests"] >= 1 and live["probe"]["errors"] == 0, live["probe"]["error_examples"]

    out = tmp_path / "load_test.json"
    merged = load_test.merge(out, result)
    assert set(merged["bars"]) == {"load_no_errors", "soak_no_errors", "soak_rss_plateau", "live_probe_under_2s",
                                   "live_sessions_end"}
    assert merged["bars"]["load_no_errors"]["met"] and merged["bars"]["live_sessions_end"]["met"]
    out.write_text(json.dumps(merged, ensure_ascii=False))

    # the command line, one part against the running app: it keeps the other parts already in the file
    load_test.main(["--part", "load", "--clients", "1", "--requests", "1", "--url", url, "--out", str(out)])
    written = json.loads(out.read_text())
    assert (written["clients"], written["ok"], written["errors"]) == (1, 1, 0)
    assert written["soak"] == json.loads(json.dumps(soak)) and written["live"]["sessions"] == 2
    summary = out.with_suffix(".md").read_text()
    assert "| load: 0 errors" in summary and "Soak RSS" in summary and "2 of 2 sessions" in summary


def test_url_must_be_local():
    with pytest.raises(SystemExit):
        load_test.parse_args(["--url", "http://example.com:7860/"])
