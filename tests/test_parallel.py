"""A corpus of your own (``attention_core.data.parallel``, ``train --task parallel``): reading every format, refusing
files that cannot be a corpus with one line, splitting, tokenising each side, and saving the task with the model."""

import codecs
import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.cli import main
from attention_core.data.parallel import (
    SPACE,
    SRC_SUBWORDS,
    Side,
    Source,
    TaskSpec,
    make_task,
    read_parallel,
    script_direction,
    split_parallel,
    splits_from_info,
)
from attention_core.data.subword import Subwords
from attention_core.data.tasks import DataError
from attention_core.data.text import strip_invisible
from attention_core.decoding.folder import ModelLoadError, load_folder
from attention_core.decoding.translator import InputError
from attention_core.hub.card import own_model_card

SUBJECTS = [("ich", "i"), ("du", "you"), ("wir", "we"), ("sie", "they"), ("er", "he")]
VERBS = [("sehe", "see"), ("mag", "like"), ("habe", "have"), ("suche", "look for"), ("male", "paint")]
OBJECTS = [("den Hund", "the dog"), ("die Katze", "the cat"), ("das Haus", "the house"), ("den Baum", "the tree"),
           ("das Buch", "the book"), ("den Garten", "the garden")]
ADJECTIVES = [("", ""), ("alten ", "old "), ("kleinen ", "small "), ("grossen ", "big ")]


def german_english() -> list[tuple[str, str]]:
    """600 distinct German → English pairs of one pattern (subject, verb, adjective, object)."""
    pairs = []
    for de_s, en_s in SUBJECTS:
        for de_v, en_v in VERBS:
            for de_o, en_o in OBJECTS:
                for de_a, en_a in ADJECTIVES:
                    article, noun = de_o.split()
                    the, thing = en_o.split()
                    pairs.append((f"{de_s} {de_v} {article} {de_a}{noun} .", f"{en_s} {en_v} {the} {en_a}{thing} ."))
    return pairs


def write_tsv(path: Path, pairs, malformed: int = 0) -> Path:
    lines = [f"{s}\t{t}" for s, t in pairs] + ["no tab on this line"] * malformed
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_tsv_reads_pairs_normalises_spaces_and_counts_malformed_lines(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("Guten  Morgen\tGood morning\textra column\n\n\tonly a target\nnur eine Quelle\t\n"
                    "a line without a tab\nHallo\tHello\n", encoding="utf-8")
    corpus = read_parallel([str(path)])
    assert corpus.pairs == [("Guten Morgen", "Good morning"), ("Hallo", "Hello")]
    assert corpus.skipped == 3  # the empty-side lines and the line without a tab; the blank line is no pair


def test_ten_percent_malformed_lines_are_skipped_and_counted_by_the_cli(tmp_path, capsys):
    pairs = german_english()[:200]
    path = write_tsv(tmp_path / "c.tsv", pairs, malformed=20)
    assert read_parallel([str(path)]).skipped == 20
    code = main(["train", "--task", "parallel", "--corpus", str(path), "--out", str(tmp_path / "m"), "--hidden", "8",
                 "--emb", "8", "--epochs", "1", "--quiet", "--max-dev", "5"])
    assert code == 0
    assert "note: skipped 20 malformed or empty corpus lines" in capsys.readouterr().err


@pytest.mark.parametrize("content,message", [
    (b"", "is empty"),
    (b"\n  \n", "is empty"),
    (b"hello\nworld\n", "has one column"),
    (b"a\tb\x00\x01\x02binary", "is binary"),
    (b"caf\xe9\tcoffee\n", "is not UTF-8 text (an invalid byte on line 1)"),
    (b"\xff\xfeH\x00\xd8", "starts as UTF-16 but is not"),
])
def test_a_file_that_cannot_be_a_corpus_is_one_error_line_from_the_cli(tmp_path, capsys, content, message):
    path = tmp_path / "bad.tsv"
    path.write_bytes(content)
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_parallel([str(path)])
    assert main(["train", "--task", "parallel", "--corpus", str(path), "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "Traceback" not in err and "\n" not in err


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-8-sig", "utf-32"])  # UTF-32's mark begins as UTF-16's
def test_a_corpus_saved_with_a_byte_order_mark_reads_as_its_utf8_twin(tmp_path, encoding):
    """Notepad's "Unicode" (UTF-16 with a byte-order mark) and "UTF-8 with BOM" give the pairs UTF-8 gives."""
    pairs = german_english()
    plain = read_parallel([str(write_tsv(tmp_path / "plain.tsv", pairs))])
    text = (tmp_path / "plain.tsv").read_text(encoding="utf-8").replace("\n", "\r\n")
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = codecs.BOM_UTF16_BE + data
    (tmp_path / "marked.tsv").write_bytes(data)
    assert read_parallel([str(tmp_path / "marked.tsv")]).pairs == plain.pairs


def test_line_aligned_files_must_have_the_same_number_of_lines(tmp_path):
    src, tgt = tmp_path / "a.de", tmp_path / "a.en"
    src.write_text("eins\nzwei\n\ndrei\nvier\n", encoding="utf-8")
    tgt.write_text("one\ntwo\n\nthree\n\n", encoding="utf-8")
    corpus = read_parallel([str(src), str(tgt)])
    assert corpus.pairs == [("eins", "one"), ("zwei", "two"), ("drei", "three")] and corpus.skipped == 1
    tgt.write_text("one\ntwo\n", encoding="utf-8")
    with pytest.raises(DataError, match="has 5 lines but .* has 2"):
        read_parallel([str(src), str(tgt)])


def test_json_lines_with_nested_fields_and_a_clear_error_for_wrong_field_names(tmp_path):
    path = tmp_path / "c.jsonl"
    rows = [{"translation": {"de": "Hallo", "en": "Hello"}}, {"translation": {"de": "Danke"}}, "not an object"]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken json\n", encoding="utf-8")
    corpus = read_parallel([str(path)], source_field="translation.de", target_field="translation.en")
    assert corpus.pairs == [("Hallo", "Hello")] and corpus.skipped == 3
    with pytest.raises(DataError, match="no object in .* has text fields 'source' and 'target'.*'translation'"):
        read_parallel([str(path)])


def test_a_hugging_face_dataset_folder_with_a_translation_dict(tmp_path):
    datasets = pytest.importorskip("datasets", reason="the optional package datasets (requirements.txt installs it)")
    rows = [{"translation": {"de": de, "en": en}, "id": i} for i, (de, en) in enumerate(german_english()[:30])]
    datasets.DatasetDict({"train": datasets.Dataset.from_list(rows)}).save_to_disk(str(tmp_path / "ds"))
    source = Source.of([str(tmp_path / "ds")], source_field="translation.de", target_field="translation.en")
    assert source.format == "hf"
    assert source.read().pairs == german_english()[:30]
    with pytest.raises(DataError, match="has no split 'test'; it has train"):
        read_parallel([str(tmp_path / "ds")], split="test", source_field="translation.de",
                      target_field="translation.en")
    with pytest.raises(DataError, match="has no field de; its fields are translation, id"):
        read_parallel([str(tmp_path / "ds")], source_field="de", target_field="translation.en")


def test_the_split_keeps_identical_sources_together_and_given_files_replace_the_drawn_splits(tmp_path):
    pairs = german_english()
    variants = [(s.upper(), t + " !") for s, t in pairs[:100]]  # same sources up to case: one group each
    path = write_tsv(tmp_path / "c.tsv", pairs + variants + pairs[:10])  # and 10 exact duplicates
    splits = split_parallel(Source.of([str(path)]), seed=7)
    assert splits.info["duplicates_dropped"] == 10
    assert splits.info["sizes"] == {"train": len(splits.train), "dev": len(splits.dev), "test": len(splits.test)}
    assert len(splits.dev) <= 35 and len(splits.test) <= 35 and len(splits.train) + len(splits.dev) + len(
        splits.test) == 700
    where = {}
    for name in ("train", "dev", "test"):
        for source, _ in getattr(splits, name):
            where.setdefault(source.casefold(), set()).add(name)
    assert all(len(names) == 1 for names in where.values())
    assert split_parallel(Source.of([str(path)]), seed=7).test == splits.test  # seeded
    test_file = write_tsv(tmp_path / "test.tsv", pairs[:5])
    given = split_parallel(Source.of([str(path)]), test=Source.of([str(test_file)]), seed=7)
    assert given.test == pairs[:5]
    assert not {s.casefold() for s, _ in given.train + given.dev} & {s.casefold() for s, _ in pairs[:5]}
    assert given.info["dropped_held_out"] == 10  # the 5 sources and their upper-case variants


def test_too_few_pairs_is_a_clear_error(tmp_path):
    with pytest.raises(DataError, match="has 3 usable pairs .*training needs at least 10"):
        split_parallel(Source.of([str(write_tsv(tmp_path / "c.tsv", german_english()[:3]))]))


def test_a_changed_corpus_is_refused_when_the_split_is_read_again(tmp_path):
    path = write_tsv(tmp_path / "c.tsv", german_english())
    splits = split_parallel(Source.of([str(path)]))
    assert splits_from_info(json.loads(json.dumps(splits.info))).test == splits.test
    write_tsv(path, german_english()[:-1])
    with pytest.raises(DataError, match="changed since the model was trained"):
        splits_from_info(splits.info)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=12),
                min_size=1, max_size=6))
def test_every_tokenizer_gives_back_the_normalised_text(words):
    text = " ".join(w for w in words if w.split())
    normalised = " ".join(unicodedata.normalize("NFC", strip_invisible(text)).split())  # what a model reads
    if not normalised:
        return
    sentences = [normalised.split()] * 3
    for kind in ("char", "word", "bpe"):
        subwords = Subwords.train(sentences, 40, min_frequency=1) if kind == "bpe" else None
        task = make_task(TaskSpec(Side("word"), Side(kind)), tgt_subwords=subwords)
        tokens = task.tokenize_tgt(text)
        if "<unk>" not in tokens:
            assert task.detokenize(tokens) == normalised
        if kind == "char":
            assert SPACE not in tokens or " " in normalised


def test_script_direction_reads_the_letters():
    assert script_direction(["مرحبا بالعالم", "hi"]) == "rtl"
    assert script_direction(["שלום", "Hello world"]) == "ltr"
    assert script_direction(["123 ..."]) == "ltr"


def _train(tmp_path: Path, *extra: str) -> Path:
    path = write_tsv(tmp_path / "de-en.tsv", german_english())
    out = tmp_path / "model"
    code = main(["train", "--task", "parallel", "--corpus", str(path), "--source-tokenizer", "bpe",
                 "--target-tokenizer", "bpe", "--source-bpe", "120", "--target-bpe", "120", "--source-lang", "de",
                 "--target-lang", "en", "--out", str(out), "--hidden", "32", "--emb", "32", "--epochs", "2",
                 "--batch-size", "16", "--quiet", *extra])
    assert code == 0
    return out


def test_a_german_english_model_with_bpe_on_both_sides_saves_loads_translates_and_resumes(tmp_path, capsys):
    out = _train(tmp_path)
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert config["task"] == "parallel"
    side = {"tokenizer": "bpe", "bpe_size": 120, "direction": "ltr"}
    assert config["task_spec"] == {"source": {**side, "language": "de"}, "target": {**side, "language": "en"}}
    translator = load_folder(out)
    assert translator.task.src_subwords is not None and translator.task.subwords is not None
    pieces = translator.task.tokenize_src("ich sehe den Schmetterling")
    assert pieces[:3] == ["ich", "sehe", "den"] and len(pieces) > 4  # an unseen word is spelled in pieces
    out_text = translator.translate(["wir mögen den alten Baum ."])[0]
    assert out_text.weights.shape == (len(out_text.row_labels), len(out_text.source_tokens))
    capsys.readouterr()
    # evaluate on the model's own split (read again from the corpus) and on a file given
    assert main(["evaluate", "--model", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == translator.meta["data"]["sizes"]["test"] == 30 and 0 <= report["bleu"] <= 100
    test = write_tsv(tmp_path / "mine.tsv", german_english()[:7])
    assert main(["evaluate", "--model", str(out), "--test", str(test)]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 7
    # translate reads German with such a model, one input a line
    assert main(["translate", "--model", str(out), "ich mag die Katze .", "du hast das Buch ."]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 2


def test_a_resumed_run_rereads_its_pieces_and_a_new_run_learns_them(tmp_path):
    from attention_core.training.loop import own_task

    spec = TaskSpec(Side("bpe", 80), Side("word"))
    other = Subwords.train([["zebra", "zebras", "xylophon"]] * 3, 40, min_frequency=1)
    other.save(tmp_path / SRC_SUBWORDS)
    pairs = german_english()
    kept = own_task(spec, pairs, tmp_path, resume=True)
    assert kept.src_subwords.tokenizer.get_vocab() == other.tokenizer.get_vocab()
    learned = own_task(spec, pairs, tmp_path, resume=False)
    assert "grossen" in learned.src_subwords.tokenizer.get_vocab()
    assert Subwords.load(tmp_path / SRC_SUBWORDS).tokenizer.get_vocab() == learned.src_subwords.tokenizer.get_vocab()
    assert not (tmp_path / "subwords.json").exists()  # a word target has no pieces


def test_a_model_folder_missing_its_source_pieces_is_refused(tmp_path):
    out = _train(tmp_path)
    (out / SRC_SUBWORDS).unlink()
    with pytest.raises(ModelLoadError, match="missing src_subwords.json"):
        load_folder(out)
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    config["task_spec"]["source"]["tokenizer"] = "morse"
    (out / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ModelLoadError, match="source tokenizer must be one of char, word, bpe"):
        load_folder(out)


def test_the_model_card_says_what_it_was_trained_on_and_how_to_open_it(tmp_path):
    out = _train(tmp_path)
    card = own_model_card(load_folder(out), "you/de-en")
    for text in ("language:\n- de\n- en", "# Attention Lab — de → en", "`de-en.tsv` (tsv, sha256",
                 "BPE pieces over whitespace words (120 pieces", "attention-lab train --task parallel",
                 "attention-lab pull --repo you/de-en --out my-model", "python app.py --models my-model",
                 "python app.py --hub-repo you/de-en"):
        assert text in card, text
    example = load_folder(out).meta["data"]["example"]
    assert f'"{example}"' in card


def test_cli_refuses_parallel_without_a_corpus_and_with_bundled_extras(tmp_path):
    result = subprocess.run([sys.executable, "-m", "attention_core.cli", "train", "--task", "parallel", "--out",
                             str(tmp_path / "m")], capture_output=True, text=True)
    assert result.returncode == 2 and result.stderr.startswith("error: --task parallel needs --corpus FILE")
    assert main(["train", "--task", "parallel", "--corpus", "x.tsv", "--extra", "cmn-eng-extra", "--out",
                 str(tmp_path / "m")]) == 2


CARD_SCRIPT = """
import json, sys
from attention_core.hub.pretrained import push
from attention_core.data.hubio import HubError
model = sys.argv[1]
try:
    push(model, "you/de-en", token="wrong")
except HubError as err:
    print("refused", flush=True)
push(model, "you/de-en", token="secret")
push(model, "you/de-en-v2", token="secret")
"""


def test_push_writes_the_card_after_the_upload_and_again_for_a_new_repo_but_keeps_a_card_you_wrote(tmp_path):
    import os
    import subprocess
    import sys

    from hub_server import serve

    from attention_core.hub.card import CARD_MARK

    out = _train(tmp_path)
    server, endpoint = serve(tmp_path / "repos", tokens=frozenset({"secret"}))
    env = {**os.environ, "HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0",
           "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    try:
        result = subprocess.run([sys.executable, "-c", CARD_SCRIPT, str(out)], env=env, capture_output=True,
                                text=True, timeout=120)
        assert result.returncode == 0, result.stderr[-3000:]
        assert "refused" in result.stdout
        card = (out / "README.md").read_text(encoding="utf-8")
        assert CARD_MARK in card and "--repo you/de-en-v2" in card  # written again for the second repo
        first = (tmp_path / "repos" / "you" / "de-en" / "README.md").read_text(encoding="utf-8")
        assert "--repo you/de-en --out" in first
        (out / "README.md").write_text("# My own card\n", encoding="utf-8")  # a card you wrote is yours
        result = subprocess.run([sys.executable, "-c", "import sys; from attention_core.hub.pretrained import push; "
                                 "push(sys.argv[1], 'you/de-en', token='secret')", str(out)], env=env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr[-3000:]
    finally:
        server.shutdown()
    assert (tmp_path / "repos" / "you" / "de-en" / "README.md").read_text(encoding="utf-8") == "# My own card\n"
    assert (out / "README.md").read_text(encoding="utf-8") == "# My own card\n"


def test_a_card_is_not_left_behind_by_a_push_the_hub_refused(tmp_path, monkeypatch):
    out = _train(tmp_path)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert main(["push", "--model", str(out), "--repo", "you/de-en"]) == 2
    assert not (out / "README.md").exists()


def test_a_dataset_id_with_a_configuration_is_read_with_it(monkeypatch):
    datasets = pytest.importorskip("datasets", reason="the optional package datasets (requirements.txt installs it)")
    calls = []

    def load_dataset(name, config=None, split=None):
        calls.append((name, config, split))
        return datasets.Dataset.from_list([{"translation": {"de": "Hallo", "en": "Hello"}}])

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    source = Source.of(["wmt/wmt19"], source_field="translation.de", target_field="translation.en",
                       split="validation", config="de-en")
    assert source.format == "hf" and source.read().pairs == [("Hallo", "Hello")]
    assert calls == [("wmt/wmt19", "de-en", "validation")]
    assert source.record()["config"] == "de-en"


def test_a_paragraph_in_a_language_written_with_spaces_is_split_into_its_sentences(tmp_path):
    translator = load_folder(_train(tmp_path))
    outputs = translator.translate_paragraph("ich sehe den alten Hund. wir mögen die Katze! er kostet 3.5 Euro")
    assert [o.source_tokens[0] for o in outputs] == ["ich", "wir", "er"] and len(outputs[2].source_tokens) > 3
    with pytest.raises(InputError, match="empty"):
        translator.translate_paragraph("   ")


@pytest.mark.parametrize("kind", ["word", "char"])
def test_invisible_characters_are_not_tokens_at_training_or_input_time(kind):
    """A scraped corpus's zero-width spaces and byte-order marks split no word and make no token; a Persian word's
    zero-width non-joiner and an emoji's joiner are spelling, and stay."""
    task = make_task(TaskSpec(Side(kind), Side(kind)))
    assert task.tokenize_src("\ufeffich\u200b sehe\u2060 den\u200e Hund") == task.tokenize_src("ich sehe den Hund")
    persian = "من می\u200cخواهم"
    assert "\u200c" in "".join(task.tokenize_src(persian))
    assert "\u200d" in "".join(task.tokenize_tgt("a 👨\u200d👩\u200d👧"))
