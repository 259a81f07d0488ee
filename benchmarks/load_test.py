"""Load, soak and live-session test of the app on 127.0.0.1 (issue #16), through gradio_client.

Three parts, each selectable with ``--part``:

* **load**: ``--clients`` concurrent clients × ``--requests`` requests each on the translation and couplet
  endpoints, mixed greedy / beam 5. Bar: 0 errors.
* **soak**: ``--soak-requests`` mixed requests from ``--soak-clients`` concurrent clients while the app
  process's resident memory (VmRSS of it and its children) is sampled every ``--soak-every`` requests.
  Bar: RSS after the last request within 10 % of RSS after ``--soak-baseline`` requests.
* **live**: ``--live-sessions`` simultaneous "watch attention learn" trainings (``/train_live``) while one
  probe client sends translation requests one after another. Bars: no probe request takes over 2 s; every
  session ends (all steps, or the app's own time limit), queued behind the tab's concurrency limit.

Usage (starts the app on the bundled models itself on a free port, unless ``--url`` is given)::

    python benchmarks/load_test.py                              # all parts, issue #16's sizes
    python benchmarks/load_test.py --part load --clients 20 --requests 10
    python benchmarks/load_test.py --clients 2 --requests 2 --soak-requests 40 --live-sessions 2 \
        --live-steps 100 --out /tmp/load_test.json              # a tiny run

Writes JSON to ``--out`` (default ``results/load_test.json``) and a Markdown summary next to it (``.md``).
The load part's figures stay at the JSON's top level (``clients``, ``ok``, ``errors``, ``p50_ms``, ...) as
before; ``soak``, ``live`` and ``bars`` are sections. A run of one part keeps the other parts already in
the file. Every loop is bounded in count and in time; only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import gradio  # noqa: E402
from app_fixtures import launch_app  # noqa: E402
from gradio_client import Client  # noqa: E402
from gradio_client.utils import Status  # noqa: E402

from demo.live import MAX_SECONDS  # noqa: E402
from demo.ui import LIVE_CONCURRENCY  # noqa: E402

TRANSLATION = ["我喜欢自然语言处理", "今天天气很好", "每次听到这首歌，都会让我回忆起自己年轻的时候。"]
COUPLET = ["两个黄鹂鸣翠柳", "春风得意马蹄疾", "海内存知己"]
VARIANT = "luong-general"
COUPLET_RULES = (True, True, True, "classical", 1.0)
"""constrained, mirror, no 重字, tone, cliché penalty: the couplet tab's defaults."""

REQUEST_TIMEOUT_S = 120.0
"""One request's bound; a slower answer counts as an error."""
SOAK_TOLERANCE = 0.10
"""Plateau bar: RSS after the last soak request at most 10 % above RSS after the baseline requests."""
PROBE_MAX_MS = 2000.0
"""Live bar: no translation request waits longer than this while live sessions train."""
MAX_PROBES = 100_000
"""Count bound on the probe loop (it also stops when the sessions end or time runs out)."""
LOAD_KEYS = ["clients", "requests_each", "ok", "errors", "error_examples", "p50_ms", "p95_ms", "max_ms",
             "throughput_rps", "wall_s", "unsent"]
"""The load part's keys, at the JSON's top level (README quotes them)."""


# ---------------------------------------------------------------- requests and their statistics


def make_client(url: str) -> Client:
    """A quiet client that downloads no files and sends no analytics."""
    return Client(url, verbose=False, analytics_enabled=False, download_files=False)


def mixed(n: int, i: int) -> tuple[str, int, str]:
    """Request ``i`` of a client whose mix offset is ``n``: (task, beam, text); every third is a couplet."""
    task = "couplet" if n % 3 == 0 else "translation"
    beam = 5 if n % 2 else 1
    return task, beam, (COUPLET if task == "couplet" else TRANSLATION)[i % 3]


def send(client: Client, task: str, beam: int, text: str) -> float:
    """One request, waited for at most ``REQUEST_TIMEOUT_S``; its latency in seconds.

    Raises:
        ValueError: The app answered with an empty output.
        TimeoutError: No answer in time (the job is cancelled).
    """
    args = (text, VARIANT, "default", False, beam, *(COUPLET_RULES if task == "couplet" else ()))
    started = time.perf_counter()
    job = client.submit(*args, api_name=f"/{task}")
    try:
        output = job.result(timeout=REQUEST_TIMEOUT_S)[0]
    except TimeoutError:
        job.cancel()
        raise
    latency = time.perf_counter() - started
    if not output.strip():
        raise ValueError(f"empty output for {task} {text!r} beam {beam}")
    return latency


def percentile(sorted_values: list[float], q: float) -> float:
    """The ``q`` quantile (0–1) by the nearest-rank-below rule the load test has always used."""
    return sorted_values[int(q * (len(sorted_values) - 1))]


@dataclass
class Tally:
    """Latencies and errors collected by many threads."""

    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ok(self, latency: float) -> int:
        """Record a success; the number of requests done so far."""
        with self.lock:
            self.latencies.append(latency)
            return len(self.latencies) + len(self.errors)

    def fail(self, err: BaseException) -> int:
        """Record an error (counted and reported, never hidden); the number of requests done so far."""
        with self.lock:
            self.errors.append(f"{type(err).__name__}: {err}")
            return len(self.latencies) + len(self.errors)

    def summary(self, wall: float) -> dict:
        """ok, errors with up to 3 examples, p50/p95/max latency in ms and throughput over ``wall`` seconds."""
        lat = [round(1000 * s, 1) for s in sorted(self.latencies)]  # ms
        return {
            "ok": len(lat),
            "errors": len(self.errors),
            "error_examples": self.errors[:3],
            "p50_ms": round(statistics.median(lat), 1) if lat else None,
            "p95_ms": percentile(lat, 0.95) if lat else None,
            "max_ms": lat[-1] if lat else None,
            "throughput_rps": round(len(lat) / wall, 2) if wall > 0 else None,
            "wall_s": round(wall, 1),
        }


def drive(url: str, clients: int, requests_each: int, seconds: float,
          on_done: Callable[[int], None] | None = None) -> dict:
    """``clients`` threads, each with its own client, send ``requests_each`` mixed requests one after another.

    Args:
        url: The app.
        clients: Concurrent clients.
        requests_each: Requests per client.
        seconds: Time bound: no request is started after it (those are counted as ``unsent``).
        on_done: Called with the number of requests done so far after each one (under no lock of ours).

    Returns:
        ``Tally.summary`` plus ``unsent``.
    """
    tally = Tally()
    unsent = [0] * clients
    deadline = time.monotonic() + seconds

    def client_loop(k: int) -> None:
        try:
            client = make_client(url)
        except Exception as err:
            tally.fail(err)
            unsent[k] = requests_each - 1
            return
        try:
            for i in range(requests_each):
                if time.monotonic() > deadline:
                    unsent[k] = requests_each - i
                    return
                try:
                    done = tally.ok(send(client, *mixed(k + i, i)))
                except Exception as err:
                    done = tally.fail(err)
                if on_done is not None:
                    on_done(done)
        finally:
            client.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=client_loop, args=(k,), daemon=True) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(1.0, deadline - time.monotonic()) + REQUEST_TIMEOUT_S)
    return {**tally.summary(time.perf_counter() - started), "unsent": sum(unsent)}


# ---------------------------------------------------------------- the three parts


def run_load(url: str, clients: int = 50, requests_each: int = 10, seconds: float = 1200) -> dict:
    """Part 1: ``clients`` concurrent clients × ``requests_each`` mixed requests."""
    return {"clients": clients, "requests_each": requests_each, **drive(url, clients, requests_each, seconds)}


def rss_mb(pid: int) -> float:
    """Resident memory (VmRSS) of process ``pid`` and all its descendants, in MiB, from ``/proc``."""
    pids, total_kb = [pid], 0
    for p in pids:  # grows while walking: children are appended as they are found
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total_kb += next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
            for task in Path(f"/proc/{p}/task").iterdir():
                pids.extend(int(c) for c in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError, StopIteration):
            continue  # it exited meanwhile (or is a zombie without VmRSS)
    return round(total_kb / 1024, 1)


def rss_at(series: list[list[float]], n: int) -> list[float]:
    """The first ``[requests, MiB]`` sample taken at or after ``n`` requests (else the last one)."""
    return next((s for s in series if s[0] >= n), series[-1])


def run_soak(url: str, pid: int | None, total: int = 5000, clients: int = 4, every: int = 100,
             baseline: int = 500, seconds: float = 1800) -> dict:
    """Part 2: ``total`` mixed requests from ``clients`` clients, the app's RSS sampled every ``every`` requests.

    Args:
        url: The app.
        pid: The app's process id (``None``: an app started elsewhere; no memory figures).
        total: Requests in all (rounded up to a multiple of ``clients``).
        clients: Concurrent clients.
        every: Requests between RSS samples.
        baseline: Requests after which the reference RSS is read (the plateau bar compares the end with it).
        seconds: Time bound.

    Returns:
        Latencies and errors, the series ``[[requests, MiB], ...]`` (the first sample before any request),
        the RSS after ``baseline`` and after the last request, their ratio and ``plateau`` (ratio ≤ 1.10).
    """
    each = math.ceil(total / clients)
    series: list[list[float]] = [[0, rss_mb(pid)]] if pid else []
    lock = threading.Lock()

    def sample(done: int) -> None:
        if pid and done % every == 0:
            mb = rss_mb(pid)
            with lock:
                series.append([done, mb])

    result = {"requests": each * clients, "clients": clients, **drive(url, clients, each, seconds, sample)}
    result["rss_every"] = every
    if not pid or len(series) < 2:
        return {**result, "rss_series_mb": series, "rss_baseline": None, "rss_final": None, "rss_ratio": None,
                "plateau": None}
    series.sort()
    base, final = rss_at(series, baseline), series[-1]
    ratio = round(final[1] / base[1], 3)
    return {**result, "rss_series_mb": series,
            "rss_baseline": {"after_requests": base[0], "mb": base[1]},
            "rss_final": {"after_requests": final[0], "mb": final[1]},
            "rss_ratio": ratio, "plateau": ratio <= 1 + SOAK_TOLERANCE}


def live_session(url: str, steps: int, deadline: float, lengths: tuple[int, int] = (5, 12)) -> dict:
    """One live training (``/train_live``: reverse, dot score, global attention), watched to its end.

    Args:
        url: The app.
        steps: Training steps (the tab accepts 100–3000).
        deadline: ``time.monotonic()`` after which the session is cancelled.
        lengths: Shortest and longest toy sequence (the tab's defaults: 5–12).

    Returns:
        Seconds queued (until the app started it) and running, the updates received, the last status line,
        ``finished`` (all steps), ``stopped_at_time_limit`` (the app's own bound) and any error.
    """
    client = make_client(url)
    submitted = time.monotonic()
    job = client.submit("reverse", "dot", "global", True, *lengths, steps, api_name="/train_live")
    started = None
    while not job.done() and time.monotonic() < deadline:  # polls at 20 Hz, bounded by the deadline
        if started is None and job.status().code in (Status.PROCESSING, Status.ITERATING):
            started = time.monotonic()
        time.sleep(0.05)
    ended = time.monotonic()
    error = None
    if not job.done():
        job.cancel()
        error = "still running at the test's time limit (cancelled)"
    elif job.exception() is not None:
        error = f"{type(job.exception()).__name__}: {job.exception()}"
    client.close()
    outputs = job.outputs()
    last = outputs[-1][0] if outputs else ""
    started = started or ended
    return {
        "queued_s": round(started - submitted, 1),
        "running_s": round(ended - started, 1),
        "updates": len(outputs),
        "last_status": last,
        "finished": last.startswith(f"step {steps}/{steps}"),
        "stopped_at_time_limit": "time limit" in last,
        "error": error,
        "interval": (started, ended),  # monotonic clock, shared by the sessions
    }


def most_at_once(intervals: list[tuple[float, float]]) -> int:
    """The largest number of overlapping ``(start, end)`` intervals."""
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    running = most = 0
    for _, delta in events:
        running += delta
        most = max(most, running)
    return most


def run_live(url: str, sessions: int = 10, steps: int = 600, seconds: float = 1800,
             lengths: tuple[int, int] = (5, 12)) -> dict:
    """Part 3: ``sessions`` simultaneous live trainings while one probe client translates, one request at a time.

    Returns:
        The probe's latencies (p50/p95/max) and errors, each session's record, how many finished or stopped
        at the app's time limit, and the most sessions the app ran at once (its designed limit is
        ``demo.ui.LIVE_CONCURRENCY``).
    """
    deadline = time.monotonic() + seconds
    records = [{"error": "no answer in time", "finished": False, "stopped_at_time_limit": False, "interval": None}
               for _ in range(sessions)]

    def session(k: int) -> None:
        try:
            records[k] = live_session(url, steps, deadline, lengths)
        except Exception as err:
            records[k] = {"error": f"{type(err).__name__}: {err}", "finished": False,
                          "stopped_at_time_limit": False, "interval": None}

    started = time.perf_counter()
    threads = [threading.Thread(target=session, args=(k,), daemon=True) for k in range(sessions)]
    for t in threads:
        t.start()
    probe, client = Tally(), make_client(url)
    for i in range(MAX_PROBES):
        if not any(t.is_alive() for t in threads) or time.monotonic() > deadline:
            break
        try:
            probe.ok(send(client, "translation", 5 if i % 2 else 1, TRANSLATION[i % 3]))
        except Exception as err:
            probe.fail(err)
    client.close()
    for t in threads:
        t.join(timeout=max(1.0, deadline - time.monotonic()) + 10)
    wall = time.perf_counter() - started
    intervals = [interval for r in records if (interval := r.pop("interval", None))]
    return {
        "sessions": sessions,
        "steps": steps,
        "lengths": list(lengths),
        "designed_limit": LIVE_CONCURRENCY,
        "app_time_limit_s": MAX_SECONDS,
        "finished": sum(r["finished"] for r in records),
        "stopped_at_time_limit": sum(r["stopped_at_time_limit"] for r in records),
        "session_errors": sum(r["error"] is not None for r in records),
        "most_running_at_once": most_at_once(intervals),
        "max_queued_s": max((r.get("queued_s", 0) for r in records), default=None),
        "session_records": records,
        "probe": {"requests": len(probe.latencies) + len(probe.errors), **probe.summary(wall)},
        "wall_s": round(wall, 1),
    }


# ---------------------------------------------------------------- bars and reports


def bars(result: dict) -> dict:
    """Issue #16's bars, each with the measured value and whether it is met, for the parts in ``result``."""
    out = {}
    if "ok" in result:
        out["load_no_errors"] = {"bar": "load: 0 errors (and every request sent)",
                                 "value": result["errors"] + result.get("unsent", 0),
                                 "met": result["errors"] == 0 and result.get("unsent", 0) == 0}
    if soak := result.get("soak"):
        out["soak_no_errors"] = {"bar": "soak: 0 errors (and every request sent)",
                                 "value": soak["errors"] + soak["unsent"],
                                 "met": soak["errors"] == 0 and soak["unsent"] == 0}
        if soak["rss_ratio"] is not None:
            b, f = soak["rss_baseline"], soak["rss_final"]
            out["soak_rss_plateau"] = {
                "bar": f"soak: RSS after {f['after_requests']} requests within {SOAK_TOLERANCE:.0%} of RSS "
                       f"after {b['after_requests']}",
                "value": soak["rss_ratio"], "met": soak["plateau"]}
    if live := result.get("live"):
        probe = live["probe"]
        out["live_probe_under_2s"] = {
            "bar": f"live: no translation request waits more than {PROBE_MAX_MS / 1000:g} s "
                   f"during {live['sessions']} live trainings (0 errors)",
            "value": probe["max_ms"],
            "met": probe["errors"] == 0 and probe["max_ms"] is not None and probe["max_ms"] <= PROBE_MAX_MS}
        ended = live["finished"] + live["stopped_at_time_limit"]
        out["live_sessions_end"] = {
            "bar": f"live: every session ends (all steps or the app's {live['app_time_limit_s']} s limit), "
                   f"at most {live['designed_limit']} at once",
            "value": f"{ended}/{live['sessions']} ended, {live['most_running_at_once']} at once",
            "met": (ended == live["sessions"] and live["session_errors"] == 0
                    and live["most_running_at_once"] <= live["designed_limit"])}
    return out


def markdown(result: dict) -> str:
    """A short Markdown summary of ``result`` (the JSON this script writes)."""
    setup = result.get("setup", {})
    lines = ["# Load test of the app (issue #16)", "",
             f"`{setup.get('command', 'python benchmarks/load_test.py')}` on {setup.get('cpus', '?')} CPU "
             f"cores, Python {setup.get('python', '?')}, Gradio {setup.get('gradio', '?')}, "
             f"app: {setup.get('app', '?')}; measured {setup.get('date', '?')}.", "",
             "| bar | measured | met |", "|---|---|---|"]
    lines += [f"| {b['bar']} | {b['value']} | {'yes' if b['met'] else '**no**'} |"
              for b in result.get("bars", {}).values()]

    def latency_row(name: str, part: dict) -> str:
        return (f"| {name} | {part['ok']} | {part['errors']} | {part['p50_ms']} | {part['p95_ms']} | "
                f"{part['max_ms']} | {part['throughput_rps']} | {part['wall_s']} |")

    lines += ["", "| part | ok | errors | p50 ms | p95 ms | max ms | requests/s | wall s |",
              "|---|---|---|---|---|---|---|---|"]
    if "ok" in result:
        lines.append(latency_row(f"load: {result['clients']} clients × {result['requests_each']}", result))
    if soak := result.get("soak"):
        lines.append(latency_row(f"soak: {soak['requests']} requests, {soak['clients']} clients", soak))
    if live := result.get("live"):
        lines.append(latency_row(f"live: probe during {live['sessions']} trainings", live["probe"]))
    examples = [e for part in (result, result.get("soak", {}), result.get("live", {}).get("probe", {}))
                for e in part.get("error_examples", [])]
    if examples:
        lines += ["", "Error examples:", "", *[f"* `{e}`" for e in examples]]
    if soak and soak["rss_series_mb"]:
        series = ", ".join(f"{int(n)}: {mb}" for n, mb in soak["rss_series_mb"])
        lines += ["", f"Soak RSS of the app process in MiB, by requests done: {series}."]
    if live:
        lines += ["", f"Live: {live['finished']} of {live['sessions']} sessions ran all {live['steps']} steps, "
                      f"{live['stopped_at_time_limit']} stopped at the app's time limit, "
                      f"{live['session_errors']} failed; at most {live['most_running_at_once']} trained at once "
                      f"(the tab's limit is {live['designed_limit']}), the longest wait in the queue was "
                      f"{live['max_queued_s']} s."]
    return "\n".join(lines) + "\n"


def drain(proc) -> deque:
    """Read the app's output in the background (a full pipe would block it); the last 50 lines."""
    tail: deque = deque(maxlen=50)

    def read() -> None:
        for line in proc.stdout:
            tail.append(line.rstrip())

    threading.Thread(target=read, daemon=True).start()
    return tail


def merge(path: Path, result: dict) -> dict:
    """``result`` over the parts already in ``path`` (a run of one part keeps the others); bars recomputed."""
    try:
        old = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        old = {}
    if "ok" in result:  # a new load part replaces the old top-level keys
        old = {k: v for k, v in old.items() if k not in LOAD_KEYS}
    merged = {**old, **result}
    merged["bars"] = bars(merged)
    return merged


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line flags."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=["load", "soak", "live", "all"], default="all")
    p.add_argument("--clients", type=int, default=50, help="load: concurrent clients")
    p.add_argument("--requests", type=int, default=10, help="load: requests per client")
    p.add_argument("--soak-requests", type=int, default=5000)
    p.add_argument("--soak-clients", type=int, default=4)
    p.add_argument("--soak-every", type=int, default=100, help="requests between RSS samples")
    p.add_argument("--soak-baseline", type=int, default=500, help="requests before the reference RSS")
    p.add_argument("--live-sessions", type=int, default=10)
    p.add_argument("--live-steps", type=int, default=600, help="training steps per session (the tab's default)")
    p.add_argument("--seconds", type=float, default=1800, help="time bound of each part")
    p.add_argument("--url", default=None, help="an app already running on 127.0.0.1 (default: start one)")
    p.add_argument("--pid", type=int, default=None, help="with --url: the app's process id, for the soak's RSS")
    p.add_argument("--out", default=str(ROOT / "results" / "load_test.json"), help="JSON; the .md goes next to it")
    args = p.parse_args(argv)
    if args.url and urlparse(args.url).hostname != "127.0.0.1":
        p.error("--url must be on 127.0.0.1")
    if args.soak_baseline < args.soak_every or args.soak_baseline > args.soak_requests:
        args.soak_baseline = max(args.soak_every, args.soak_requests // 10)
    return args


def main(argv: list[str] | None = None) -> None:
    """Start the app (unless ``--url``), run the chosen parts, write the JSON and the Markdown."""
    args = parse_args(argv)
    parts = ["load", "soak", "live"] if args.part == "all" else [args.part]
    proc, url, pid, log = None, args.url, args.pid, None
    if url is None:
        proc, url = launch_app()
        pid, log = proc.pid, drain(proc)
    command = " ".join(["python benchmarks/load_test.py", *(argv if argv is not None else sys.argv[1:])])
    result: dict = {"setup": {"command": command, "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                              "parts": parts, "cpus": os.cpu_count(), "python": platform.python_version(),
                              "gradio": gradio.__version__,
                              "app": "bundled models, OMP_NUM_THREADS=1" if proc else url}}
    try:
        if "load" in parts:
            result.update(run_load(url, args.clients, args.requests, args.seconds))
        if "soak" in parts:
            result["soak"] = run_soak(url, pid, args.soak_requests, args.soak_clients, args.soak_every,
                                      args.soak_baseline, args.seconds)
        if "live" in parts:
            result["live"] = run_live(url, args.live_sessions, args.live_steps, args.seconds)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    if log and not all(b["met"] for b in bars(result).values()):
        result["app_log_tail"] = list(log)
    out = Path(args.out)
    result = merge(out, result)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    out.with_suffix(".md").write_text(markdown(result))
    print(json.dumps(result["bars"], ensure_ascii=False, indent=2))
    print(f"wrote {out} and {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
