"""How long ``python app.py`` takes to answer, stage by stage, as a visitor meets it (issue #54).

Starts the app (by default in a fresh ``git clone`` of this checkout's ``HEAD``: no built docs site, no bytecode of
its own modules), on a free port on 127.0.0.1, and measures from the moment the process is started:

* each stage line the app prints (``[ 7.7 s] libraries loaded`` …; their names are ``app.STAGES``);
* **first page**: the first ``GET /`` that answers 200 (what a visitor's browser waits for);
* **first answer**: the first translation through the API once the page answers (it may wait for its model's
  weights, loaded in the background);
* **weights**: the line saying every model is loaded.

The machine's load average and core count are written beside the figures: a start measured on a busy machine is
slower, and says so. Every wait is bounded; only 127.0.0.1 is contacted.

Usage::

    python benchmarks/app_start.py                    # one start in a fresh clone
    python benchmarks/app_start.py --runs 3 --here    # three starts of this checkout (its docs site, if built)
    python benchmarks/app_start.py --commit 24b3af6   # an older commit, to compare (its log may lack the stages)
    python benchmarks/app_start.py --out /tmp/app_start.json

Prints a Markdown table; ``--out`` also writes the JSON (and the table beside it, ``.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGE = re.compile(r"^\[\s*([\d.]+) s\] (\w+)")
TIMEOUT_S = 300
"""The longest any stage may take before the run is called failed."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fresh_clone(into: Path, commit: str = "HEAD") -> Path:
    """A ``git clone`` of this checkout at ``commit`` (models included; hard links, so it is quick)."""
    folder = into / "attention-lab"
    subprocess.run(["git", "clone", "--quiet", "--local", "--no-checkout", str(ROOT), str(folder)], check=True)
    rev = subprocess.run(["git", "rev-parse", commit], cwd=ROOT, capture_output=True, text=True, check=True)
    subprocess.run(["git", "checkout", "--quiet", rev.stdout.strip()], cwd=folder, check=True)
    return folder


def one_start(folder: Path) -> dict:
    """Start ``python app.py`` in ``folder``; return the seconds to each stage, the first page and the first answer."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "app.py", "--port", str(port)], cwd=folder, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # its group: the docs build it starts goes with it
    stages: dict[str, float] = {}
    lines: list[str] = []

    def read() -> None:
        for line in proc.stdout:
            lines.append(line.rstrip())
            found = STAGE.match(line)
            if found:
                stages.setdefault(found[2], time.perf_counter() - started)
                if "models loaded in" in line:
                    stages.setdefault("weights loaded", time.perf_counter() - started)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    result: dict = {}
    try:
        deadline = started + TIMEOUT_S
        while time.perf_counter() < deadline and "first page" not in result:
            if proc.poll() is not None:
                raise RuntimeError("the app exited: " + "\n".join(lines[-20:]))
            try:
                with urllib.request.urlopen(url, timeout=2) as page:
                    if page.status == 200:
                        result["first page"] = time.perf_counter() - started
            except OSError:
                time.sleep(0.1)
        if "first page" not in result:
            raise RuntimeError(f"no page within {TIMEOUT_S} s")
        from gradio_client import Client

        client = Client(url, verbose=False)
        text, *_ = client.predict("我们每天早上七点吃早饭。", "luong-general", "default", False, 5, True,
                                  api_name="/translation")
        result["first answer"] = time.perf_counter() - started
        result["first answer text"] = text
        while time.perf_counter() < deadline and "weights loaded" not in stages:
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the app and the docs build it may have started in the clone
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    result["stages"] = stages
    result["log"] = lines
    return result


def table(runs: list[dict], where: str) -> str:
    """The runs as Markdown: one row per figure, the median and each run's value."""
    keys = ["libraries", "models", "page", "ready", "first page", "first answer", "weights loaded"]
    out = [f"Start of `python app.py` ({where}); seconds from the process start.", "",
           "| stage | median | runs |", "|---|---:|---|"]
    for key in keys:
        values = [run["stages"].get(key, run.get(key)) for run in runs]
        values = [v for v in values if v is not None]
        if values:
            out.append(f"| {key} | {statistics.median(values):.1f} | {', '.join(f'{v:.1f}' for v in values)} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=1, help="starts to measure (default %(default)s)")
    p.add_argument("--here", action="store_true", help="start this checkout instead of a fresh clone of HEAD")
    p.add_argument("--commit", default="HEAD", help="clone this commit (an older one to compare; default HEAD)")
    p.add_argument("--out", type=Path, help="also write the JSON here (and the table beside it, .md)")
    args = p.parse_args(argv)
    load_before = os.getloadavg()
    runs = []
    with tempfile.TemporaryDirectory(prefix="attention-lab-start-") as tmp:
        for _ in range(args.runs):
            folder = ROOT if args.here else fresh_clone(Path(tmp) / f"run{len(runs)}", args.commit)
            runs.append(one_start(folder))
    where = "this checkout" if args.here else f"a fresh clone of {args.commit}"
    report = {
        "where": where,
        "commit": subprocess.run(["git", "rev-parse", "--short", args.commit], cwd=ROOT, capture_output=True,
                                 text=True).stdout.strip(),
        "cores": os.cpu_count(), "load_average_before": load_before, "load_average_after": os.getloadavg(),
        "python": platform.python_version(), "runs": runs,
    }
    text = table(runs, where) + (f"\n\nMachine: {os.cpu_count()} cores, load average {load_before[0]:.2f} "
                                 f"(1 min) before, {report['load_average_after'][0]:.2f} after; commit "
                                 f"{report['commit']}.")
    print(text)
    for run in runs:
        print("\n".join(["", "console:", *run["log"]]))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        args.out.with_suffix(".md").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
