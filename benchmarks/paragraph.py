"""How long a paragraph takes in the app, and how large its heatmaps are.

Usage::

    python benchmarks/paragraph.py                 # the bundled translation models, default variant
    python benchmarks/paragraph.py --variant none --repeats 5

Times the app's own handler (``demo.handlers.run``: validation, sentence splitting, one batched
decode, the figures) on a 300-character paragraph of everyday sentences that are not in the corpus,
greedy and beam 5, after one warm-up request, with ``torch`` on the threads it would use in the app.
The payload is the JSON that Gradio sends for the heatmap of every sentence (``plotly`` figure
JSON), with the largest one's rows × columns. Writes ``results/paragraph.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_core.data.atomic import atomic_write_text  # noqa: E402
from demo.handlers import Settings, heatmap_figure, run  # noqa: E402
from demo.models import DEFAULT_VARIANT, ModelRegistry  # noqa: E402

PARAGRAPH = (
    "我每天早上七点起床，先喝一杯水，然后出去跑步。跑完步以后，我回家洗澡，吃早饭。"
    "我通常吃面包和鸡蛋，有时候也喝一点牛奶。八点半我坐公共汽车去学校。"
    "路上人很多，车也很多，所以我常常在车上看书。到了学校，我先去图书馆借书，再去教室上课。"
    "我们的老师很好，她上课的时候总是笑着说话。下课以后，我和朋友们一起去食堂吃午饭。"
    "下午我们有两节课，四点以后就没有课了。我喜欢在操场上打篮球，也喜欢在湖边散步。"
    "晚上我在宿舍里做作业，给家里打电话。妈妈总是问我吃得好不好，睡得好不好。"
    "周末的时候，我常常和朋友去看电影，或者去公园里拍照。上个星期六我们去了海边，那天天气很好，"
    "我们在沙滩上玩了一整天。十一点我就睡觉了。你每天几点睡觉？"
)
"""About 300 characters: everyday sentences written for this benchmark (none is in the corpus)."""


def measure(registry: ModelRegistry, variant: str, beam: int, repeats: int) -> dict:
    """Median and maximum handler time, and the heatmap payload of every sentence."""
    settings = Settings(variant, beam_size=beam)
    run(registry, "translation", PARAGRAPH, settings)  # warm-up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = run(registry, "translation", PARAGRAPH, settings)
        times.append(time.perf_counter() - started)
    sentences = result.state["sentences"]
    payloads = [len(heatmap_figure(s, None, False, "").to_json()) for s in sentences]
    cells = [(len(s["words"]), len(s["source"])) for s in sentences]
    return {
        "variant": variant,
        "beam": beam,
        "characters": len(PARAGRAPH),
        "sentences": len(sentences),
        "seconds_median": round(statistics.median(times), 3),
        "seconds_max": round(max(times), 3),
        "heatmap_bytes_total": sum(payloads),
        "heatmap_bytes_max": max(payloads),
        "largest_heatmap": "×".join(map(str, max(cells, key=lambda rc: rc[0] * rc[1]))),
        "output": result.text,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=str(ROOT / "models"))
    parser.add_argument("--variant", default=DEFAULT_VARIANT)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=str(ROOT / "results"))
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    registry = ModelRegistry.load(args.models)
    rows = [measure(registry, args.variant, beam, args.repeats) for beam in (1, 5)]
    out = Path(args.out)
    atomic_write_text(out / "paragraph.json", json.dumps(rows, ensure_ascii=False, indent=2))
    table = ("| decoding | characters | sentences | handler time, median (max) | heatmap JSON, all sentences "
             "(largest) | largest heatmap (rows × columns) |\n|---|---|---|---|---|---|\n")
    table += "".join(
        f"| {'greedy' if r['beam'] == 1 else 'beam ' + str(r['beam'])} | {r['characters']} | {r['sentences']} | "
        f"{r['seconds_median']:.2f} s ({r['seconds_max']:.2f} s) | {r['heatmap_bytes_total'] / 1024:.0f} KiB "
        f"({r['heatmap_bytes_max'] / 1024:.0f} KiB) | {r['largest_heatmap']} |\n"
        for r in rows
    )
    atomic_write_text(out / "paragraph.md", table)
    print(table)
    print(rows[0]["output"])


if __name__ == "__main__":
    main()
