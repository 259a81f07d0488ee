"""Load test of the app: N concurrent clients × M requests each on 127.0.0.1.

Usage (starts the app on the bundled models itself, on a free port)::

    python benchmarks/load_test.py --clients 20 --requests 10

Prints errors (must be 0), p50/p95 latency and throughput as JSON; ``--out`` writes it to a file.
Requests alternate between the translation and couplet tabs and between greedy and beam 5.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from app_fixtures import launch_app  # noqa: E402
from gradio_client import Client  # noqa: E402

TRANSLATION = ["我喜欢自然语言处理", "今天天气很好", "每次听到这首歌，都会让我回忆起自己年轻的时候。"]
COUPLET = ["两个黄鹂鸣翠柳", "春风得意马蹄疾", "海内存知己"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--requests", type=int, default=10)
    p.add_argument("--url", default=None, help="an app already running (default: start one)")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    proc = None
    url = args.url
    if url is None:
        proc, url = launch_app()
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def client_loop(k: int) -> None:
        client = Client(url, verbose=False)
        for i in range(args.requests):
            beam = 5 if (k + i) % 2 else 1
            started = time.perf_counter()
            try:
                if (k + i) % 3 == 0:
                    text = client.predict(COUPLET[i % 3], "luong-general", "default", False, beam, True, True, True,
                                      "classical", 1.0, api_name="/couplet")[0]
                else:
                    text = client.predict(TRANSLATION[i % 3], "luong-general", "default", False, beam,
                                          api_name="/translation")[0]
                assert text.strip(), "empty output"
                with lock:
                    latencies.append(time.perf_counter() - started)
            except Exception as err:  # counted and reported, never hidden
                with lock:
                    errors.append(f"{type(err).__name__}: {err}")

    started = time.perf_counter()
    threads = [threading.Thread(target=client_loop, args=(k,)) for k in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    if proc is not None:
        proc.terminate()
    lat = sorted(latencies)
    result = {
        "clients": args.clients,
        "requests_each": args.requests,
        "ok": len(lat),
        "errors": len(errors),
        "error_examples": errors[:3],
        "p50_ms": round(1000 * statistics.median(lat), 1) if lat else None,
        "p95_ms": round(1000 * lat[int(0.95 * (len(lat) - 1))], 1) if lat else None,
        "throughput_rps": round(len(lat) / wall, 2),
        "wall_s": round(wall, 1),
    }
    print(json.dumps(result, ensure_ascii=False))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
