"""Pack the zoo models a device machine has trained, for the trip back (float16 model folders, many a call).

A device machine returns at most 8 files a call (16 MiB each, 64 MiB in all). Each call packs the models whose
training has ended and were not packed yet, in the zoo's order (the app's defaults first), one
``<task>--<variant>.tar.xz`` each (the float16 model folder of its final run and that run's ``metrics.jsonl``), and
gathers those archives into at most seven ``models-<call>-<k>.tar`` files of 16 MiB or less (a translation model is
about 6 MB, a couplet model about 8.5 MB: two or one a file; with 62 MiB a call, about ten translation models or
seven couplet models come back at once), plus
``logs-<call>.tar.xz`` with every worker's log and ``sent.json``. ``--final`` also packs the models still training,
as far as they got: their best weights so far, with a ``PARTIAL.json`` that ``attention-lab zoo --stage finish``
refuses. Every call's files stay in ``<work>/outbox/<call>/``: ``--resend N`` copies call N's again, for a call
whose files did not come back.

    python scripts/zoo_pack.py --work /tmp/zoo --out "$OUT" [--final | --resend N]

Back on the CPU machine, ``scripts/zoo_finish.sh`` unpacks each archive to ``runs/<task>/<run>/``, where
``attention-lab zoo --stage finish --recipe gpu --only <task>/<variant>`` exports and evaluates it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tarfile
import time
from pathlib import Path

from attention_core.decoding.folder import WEIGHTS, load_folder, save_pretrained
from attention_core.hub.zoo import PARTIAL, ZOO_ORDER, final_run

MAX_FILE = 16 * 2**20
"""The largest file a device call brings back."""
MAX_CALL = 64 * 2**20
"""The most a device call brings back in all."""
LOGS_ROOM = 2 * 2**20
"""Room kept for the call's logs archive."""


def trained(work: Path, task: str, variant: str) -> bool:
    """Whether a worker has written ``task/variant``'s last training event (``zoo --stage train``)."""
    done = f'{{"event": "zoo-trained", "model": "{task}/{variant}"}}'
    return any(done in log.read_text(encoding="utf-8", errors="replace") for log in (work / "logs").glob("*.log"))


def best_run(runs: Path, task: str, variant: str) -> Path | None:
    """The run folder with the model's best weights so far: the final stage's, else the first's, else none."""
    for folder in (final_run(runs, task, variant), runs / task / variant):
        if (folder / WEIGHTS).is_file():
            return folder
    return None


def in_tar(size: int) -> int:
    """The bytes a member of ``size`` bytes takes in a plain tar: a 512-byte header and its data padded to 512."""
    return 512 + -(-size // 512) * 512


TAR_END = 1024 + tarfile.RECORDSIZE
"""Room a plain tar needs besides its members: two empty blocks, then padding to a whole record (10,240 bytes)."""


def place(size: int, files: list[int], max_files: int, max_file: int = MAX_FILE) -> int | None:
    """The file an archive of ``size`` bytes joins (an index into ``files``, the bytes of their members so far).

    The first file with room, else a new one (``len(files)``) while there are fewer than ``max_files``; ``None`` if it
    fits nowhere this call. Each member counts as it stands in the tar (``in_tar``) and every file keeps
    ``TAR_END`` free, so no file comes out over ``max_file``.
    """
    need = in_tar(size)
    for i, used in enumerate(files):
        if used + need + TAR_END <= max_file:
            return i
    return len(files) if len(files) < max_files and need + TAR_END <= max_file else None


def main() -> None:
    """Pack what has ended (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True, type=Path, help="the device's work folder (runs/, logs/)")
    parser.add_argument("--out", required=True, type=Path, help="where the files go")
    parser.add_argument("--final", action="store_true", help="also pack models still training, as far as they got")
    parser.add_argument("--resend", type=int, default=None, metavar="N", help="copy call N's files again")
    parser.add_argument("--max-files", type=int, default=7, help="files of models this call (one more is the logs')")
    parser.add_argument("--max-bytes", type=int, default=MAX_CALL - LOGS_ROOM, help="bytes of models this call")
    parser.add_argument("--only", nargs="+", default=None, metavar="TASK/VARIANT", help="the models trained there "
                        "(default: the whole zoo)")
    args = parser.parse_args()
    models = [(t, v) for t, v in ZOO_ORDER if args.only is None or f"{t}/{v}" in args.only]
    runs, sent_path = args.work / "runs", args.work / "sent.json"
    sent = json.loads(sent_path.read_text()) if sent_path.is_file() else {}
    if args.resend is not None:
        for kept in sorted((args.work / "outbox" / str(args.resend)).glob("*.tar*")):
            shutil.copy(kept, args.out / kept.name)
            print(json.dumps({"event": "resent", "file": kept.name}), flush=True)
        return
    call = max([v["call"] for v in sent.values()], default=0) + 1
    outbox = args.work / "outbox" / str(call)
    (outbox / "models").mkdir(parents=True, exist_ok=True)
    files: list[int] = []  # bytes in each models-<call>-<k>.tar
    members: list[list[Path]] = []
    for task, variant in models:
        name = f"{task}/{variant}"
        if name in sent:
            continue
        done = trained(args.work, task, variant)
        run = best_run(runs, task, variant)
        if run is None or not (done or args.final):
            continue
        stage = args.work / "export" / task / run.name
        shutil.rmtree(stage, ignore_errors=True)
        save_pretrained(load_folder(run), stage, half=True)
        if (run / "metrics.jsonl").is_file():
            shutil.copy(run / "metrics.jsonl", stage / "metrics.jsonl")
        if not done:
            why = "its training had not ended when it was packed" if run.name == final_run(runs, task, variant).name \
                else "only its first stage's weights: the second had not ended when it was packed"
            (stage / PARTIAL).write_text(json.dumps({"reason": why}) + "\n")
        archive = outbox / "models" / f"{task}--{variant}.tar.xz"
        with tarfile.open(archive, "w:xz", preset=1) as tar:
            tar.add(stage, arcname=f"{task}/{run.name}")
        size = archive.stat().st_size
        where = place(size, files, args.max_files)
        if where is None or sum(files) + in_tar(size) + TAR_END * (len(files) + (where == len(files))) > args.max_bytes:
            archive.unlink()
            print(json.dumps({"event": "pack-later", "model": name, "bytes": size}), flush=True)
            continue
        if where == len(files):
            files.append(0)
            members.append([])
        files[where] += in_tar(size)
        members[where].append(archive)
        sent[name] = {"call": call, "file": f"models-{call}-{where + 1}.tar", "run": run.name, "partial": not done,
                      "bytes": size, "time": time.time()}
        print(json.dumps({"event": "packed", "model": name, **sent[name]}), flush=True)
    for k, archives in enumerate(members, 1):
        gathered = outbox / f"models-{call}-{k}.tar"
        with tarfile.open(gathered, "w") as tar:  # xz already: gathered, not compressed
            for archive in archives:
                tar.add(archive, arcname=archive.name)
        if (size := gathered.stat().st_size) > MAX_FILE:  # would not come back: its models stay for a later call
            for archive in archives:
                del sent[archive.name.removesuffix(".tar.xz").replace("--", "/", 1)]
            gathered.unlink()
            print(json.dumps({"event": "pack-later", "file": gathered.name, "bytes": size}), flush=True)
            continue
        shutil.copy(gathered, args.out / gathered.name)
    sent_path.write_text(json.dumps(sent, indent=1))
    with tarfile.open(outbox / f"logs-{call}.tar.xz", "w:xz") as tar:
        tar.add(args.work / "logs", arcname="logs")
        tar.add(sent_path, arcname="sent.json")
        for metrics in runs.glob("*/*/metrics.jsonl"):
            tar.add(metrics, arcname=f"metrics/{metrics.parent.parent.name}/{metrics.parent.name}.jsonl")
    shutil.copy(outbox / f"logs-{call}.tar.xz", args.out / f"logs-{call}.tar.xz")
    left = [f"{t}/{v}" for t, v in models if f"{t}/{v}" not in sent]
    print(json.dumps({"event": "pack-done", "call": call, "bytes": sum(files), "files": len(files), "left": left}),
          flush=True)


if __name__ == "__main__":
    main()
