"""tv4dialog as extra translation data (issue #29): the punctuation rule, reading, the held-out episodes, the mix."""

import time
from pathlib import Path

import pytest
from corpus import data_dir

from attention_core.data.tasks import (
    DataError,
    hold_out_episodes,
    read_extra,
    read_tv4dialog,
    split_translation,
)
from attention_core.data.text import normalize_chinese, punctuate_subtitle, tokenize_chinese

SERIES = ("castle", "friends", "house", "tbbt")


def bare(chinese: str) -> str:
    """What was said: normalised Chinese without punctuation or spaces (a plain reference for the split's check)."""
    return "".join(ch for ch in normalize_chinese(chinese) if ch.isalnum()).lower()


# --- the punctuation rule -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chinese", "english", "expected"),
    [
        ("少来了 你们都在约会了", "Come on, you're dating.", "少来了，你们都在约会了。"),
        ("你去哪儿", "Where are you going?", "你去哪儿？"),
        ("快跑  快跑", "Run! Run!", "快跑，快跑！"),  # a run of spaces is one pause
        ("谢谢", '"Thank you!"', "谢谢！"),  # closing quotes after the English mark are skipped
        ("你是谁", "Who are you? *", "你是谁？"),
        ("我 我不知道", "I-- I don't know--", "我，我不知道。"),  # a dash is no question or exclamation
        ("你几岁了 12岁", "How old are you? 12.", "你几岁了 12岁。"),  # a number keeps its space
        ("這個 怎麼樣", "How about this one?", "这个，怎么样？"),  # normalised: simplified characters
    ],
)
def test_punctuate_subtitle(chinese, english, expected):
    assert punctuate_subtitle(chinese, english) == expected


def test_punctuate_subtitle_keeps_latin_words_and_their_spaces():
    assert punctuate_subtitle("我用 iPhone 手机", "I use an iPhone.") == "我用 iPhone 手机。"
    assert punctuate_subtitle("有更好的主意吗 Ricky", "Got a better idea, Ricky?") == "有更好的主意吗 Ricky？"
    assert punctuate_subtitle("Oh 别那么认真", "Oh, don't be so serious!") == "Oh 别那么认真！"


def test_punctuate_subtitle_leaves_a_punctuated_line_as_it_is():
    assert punctuate_subtitle("什么? 拜托", "What? Come on.") == "什么？ 拜托。"  # no '，' after a mark
    assert punctuate_subtitle("你好，世界！", "Hello, world.") == "你好，世界！"  # its own final mark wins
    assert punctuate_subtitle("谁知道呢…", "God knows why.") == "谁知道呢…"
    assert punctuate_subtitle("* 一次死不了 *", "* one of them won't do it *") == "* 一次死不了 *"
    for line, english in (("少来了 你们都在约会了", "Come on."), ("我用 iPhone 手机", "I use an iPhone!")):
        once = punctuate_subtitle(line, english)
        assert punctuate_subtitle(once, english) == once  # idempotent


def test_punctuate_subtitle_of_an_empty_line_is_empty():
    assert punctuate_subtitle("", "Hello.") == ""
    assert punctuate_subtitle("   ", "Hello.") == ""
    assert punctuate_subtitle("你好", "") == "你好。"


def test_visitors_ascii_marks_reach_the_model_as_the_subtitles_full_width_marks():
    subtitle = tokenize_chinese(punctuate_subtitle("少来了 你们都在约会了", "Come on, you're dating?"))
    for typed in ("少来了,你们都在约会了?", "少来了, 你们都在约会了?", "少来了，你们都在约会了？"):
        assert tokenize_chinese(typed) == subtitle
    excited = tokenize_chinese(punctuate_subtitle("等等 好吗", "Wait, okay!"))
    assert tokenize_chinese("等等,好吗!") == excited
    assert tokenize_chinese("等等;好吗:") == ["等", "等", "；", "好", "吗", "："]


# --- a synthetic data folder ----------------------------------------------------------------------------------------


def _episode_lines(series: str, season: int, episode: int, n: int) -> list[str]:
    ep = f"{series}/S{season:02d}E{episode:02d}"
    return [f"{series}{season}第{episode}集 第{i}句 好吗\tLine {i} of {ep}, okay?\t{ep}/{i}-{i}" for i in range(n)]


def _write_data(root: Path, with_extra: bool = True, malformed: bool = True) -> Path:
    """cmn-eng (24 pairs), cmn-eng-extra (3 pairs) and tv4dialog: 4 series x 6 episodes of 3-8 utterances."""
    (root / "cmn-eng").mkdir(parents=True)
    cmn = [f"Sentence {i}.\t句子{i}号。\tCC-BY 2.0 (France) Attribution: tatoeba.org #{i}" for i in range(24)]
    (root / "cmn-eng" / "cmn.txt").write_text("\ufeff" + "\n".join(cmn) + "\n\n", encoding="utf-8")
    lines = []
    for s, series in enumerate(SERIES):
        for e in range(6):
            lines += _episode_lines(series, 1, e + 1, 3 + (s + e) % 6)
    if malformed:
        lines[5:5] = [
            "只有两列\tOnly two columns.",
            "\tEmpty Chinese.\tcastle/S09E01/1-1",
            "中文\t\tcastle/S09E01/1-2",
            "没有集\tNo episode.\tcastle",
            "多一列\tOne more.\tcastle/S09E01/1-3\textra",
        ]
    (root / "tv4dialog").mkdir()
    (root / "tv4dialog" / "tv4dialog.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "tv4dialog" / "README.md").write_text("not a corpus file\n", encoding="utf-8")
    if with_extra:
        (root / "cmn-eng-extra").mkdir()
        extra = ["More.\t更多。\tx", "Again.\t再来一次！\tx"]
        (root / "cmn-eng-extra" / "cmn-extra.txt").write_text("\n".join(extra) + "\n", encoding="utf-8")
    return root


def _episodes_of(root: Path) -> dict[tuple[str, str], str]:
    corpus = read_tv4dialog(root)
    return dict(zip(corpus.pairs, corpus.episodes))


def test_read_tv4dialog_punctuates_keeps_episodes_and_counts_malformed_lines(tmp_path):
    root = _write_data(tmp_path)
    corpus = read_tv4dialog(root)
    assert corpus.skipped == 5
    assert len(corpus.pairs) == len(corpus.episodes) == sum(3 + (s + e) % 6 for s in range(4) for e in range(6))
    assert corpus.pairs[0] == ("castle1第1集，第0句，好吗？", "Line 0 of castle/S01E01, okay?")
    assert corpus.episodes[0] == "castle/S01E01" and set(e.split("/")[0] for e in corpus.episodes) == set(SERIES)
    assert read_tv4dialog(root / "tv4dialog" / "tv4dialog.tsv").pairs == corpus.pairs  # the file itself


def test_a_missing_tv4dialog_names_the_path_and_the_pull_command(tmp_path):
    with pytest.raises(DataError, match=r"tv4dialog\.tsv.*attention-lab data pull tv4dialog"):
        read_tv4dialog(tmp_path)
    _write_data(tmp_path / "d", with_extra=False)
    with pytest.raises(DataError, match=r"cmn-eng-extra.*attention-lab data pull cmn-eng-extra"):
        split_translation(tmp_path / "d", extra=("cmn-eng-extra",))
    (tmp_path / "d" / "tv4dialog" / "tv4dialog.tsv").unlink()
    with pytest.raises(DataError, match=r"exactly one corpus file.*found 0"):
        split_translation(tmp_path / "d", extra=("tv4dialog",))


def test_extra_folders_are_read_by_their_file(tmp_path):
    root = _write_data(tmp_path)
    assert read_extra(root / "tv4dialog").episodes is not None  # .tsv: dialogues
    assert read_extra(root / "cmn-eng-extra").episodes is None  # .txt: the cmn.txt format
    (root / "cmn-eng-extra" / "second.txt").write_text("Hi.\t嗨。\tx\n", encoding="utf-8")
    with pytest.raises(DataError, match="found 2"):
        read_extra(root / "cmn-eng-extra")


# --- the held-out episodes ------------------------------------------------------------------------------------------


def test_hold_out_episodes_takes_one_per_series_then_more_while_closer():
    episodes = ["a/1"] * 4 + ["a/2"] * 4 + ["a/3"] * 4 + ["b/1"] * 1 + ["b/2"] * 1 + ["b/3"] * 1
    test, dev = hold_out_episodes(episodes, seed=3, size=6)
    # round 1: one a (4) and one b (1) = 5; round 2: another a would make 9 (farther from 6), another b 6 (closer)
    assert [e[0] for e in test] == ["a", "b", "b"] and [e[0] for e in dev] == ["a", "b"]
    assert len(set(test + dev)) == 5
    assert hold_out_episodes(episodes, seed=3, size=0) == ([], [])
    assert hold_out_episodes(list(reversed(episodes)), seed=3, size=6) == (test, dev)  # line order plays no part


def test_episodes_are_never_split_across_train_dev_and_test(tmp_path):
    root = _write_data(tmp_path)
    splits = split_translation(root, seed=7, dev_size=4, test_size=4, extra=("cmn-eng-extra", "tv4dialog"),
                               dialogue_size=10)
    episode = _episodes_of(root)
    test, dev = splits.extra_tests["tv4dialog-test"], splits.extra_devs["tv4dialog-dev"]
    record = splits.info["dialogues"]["tv4dialog"]
    test_eps, dev_eps = record["tv4dialog-test"]["episodes"], record["tv4dialog-dev"]["episodes"]
    assert {episode[p] for p in test} == set(test_eps) and {episode[p] for p in dev} == set(dev_eps)
    assert not set(test_eps) & set(dev_eps)
    for eps in (test_eps, dev_eps):
        assert {e.split("/")[0] for e in eps} == set(SERIES)  # every series
    train_eps = {episode[p] for p in splits.train if p in episode}
    assert not train_eps & set(test_eps + dev_eps)
    assert train_eps | set(test_eps + dev_eps) == set(episode.values())  # every other episode trains
    held = [p for p in episode if episode[p] in test_eps + dev_eps]
    assert sorted(held) == sorted(test + dev)  # whole episodes: every utterance of them is held out


def test_held_out_sizes_and_the_record_in_info(tmp_path):
    root = _write_data(tmp_path)
    splits = split_translation(root, seed=7, dev_size=4, test_size=4, extra=("cmn-eng-extra", "tv4dialog"),
                               dialogue_size=10)
    record = splits.info["dialogues"]["tv4dialog"]
    per_episode = _episodes_of(root)
    for name, pairs in (("tv4dialog-test", splits.extra_tests["tv4dialog-test"]),
                        ("tv4dialog-dev", splits.extra_devs["tv4dialog-dev"])):
        assert record[name]["pairs"] == splits.info["sizes"][name] == len(pairs)
        assert len(pairs) == sum(list(per_episode.values()).count(e) for e in record[name]["episodes"])
        assert len(record[name]["episodes"]) == 4  # 4 episodes of 3-8 reach 10; a fifth only moves away
    assert record["size"] == 10 and record["held_out_dropped_in_cmn_eng"] == 0
    assert splits.info["sizes"]["train"] == len(splits.train)
    assert splits.info["skipped_lines"] == 5 and "punctuate_subtitle" in splits.info["rule"]
    assert "tv4dialog-test" in splits.evaluation_sets() and "tv4dialog-dev" not in splits.evaluation_sets()
    assert all(zh.endswith("？") for zh, _ in splits.extra_tests["tv4dialog-test"])  # normalised like train


def test_the_held_out_slices_depend_on_the_seed_alone(tmp_path):
    root = _write_data(tmp_path)
    kwargs = dict(dev_size=4, test_size=4, dialogue_size=10)
    a = split_translation(root, seed=7, extra=("cmn-eng-extra", "tv4dialog"), **kwargs)
    b = split_translation(root, seed=7, extra=("cmn-eng-extra", "tv4dialog"), **kwargs)
    alone = split_translation(root, seed=7, extra=("tv4dialog",), **kwargs)
    other = split_translation(root, seed=8, extra=("cmn-eng-extra", "tv4dialog"), **kwargs)
    assert (a.train, a.extra_tests, a.extra_devs, a.info) == (b.train, b.extra_tests, b.extra_devs, b.info)
    assert (a.extra_tests, a.extra_devs) == (alone.extra_tests, alone.extra_devs)  # other extras play no part
    assert a.info["dialogues"] != other.info["dialogues"]


def test_cmn_eng_dev_and_test_are_unchanged_by_adding_tv4dialog(tmp_path):
    root = _write_data(tmp_path)
    before = split_translation(root, seed=7, dev_size=4, test_size=4)
    after = split_translation(root, seed=7, dev_size=4, test_size=4, extra=("cmn-eng-extra", "tv4dialog"),
                              dialogue_size=10)
    assert (after.dev, after.test) == (before.dev, before.test)
    assert after.train[: after.main_train_size] == before.train  # Tatoeba first, the extra data after it
    assert before.extra_tests == before.extra_devs == {} and "dialogues" not in before.info


def test_extra_pairs_whose_chinese_is_held_out_are_dropped_and_counted(tmp_path):
    root = _write_data(tmp_path, malformed=False)
    probe = split_translation(root, seed=7, dev_size=4, test_size=4, extra=("tv4dialog",), dialogue_size=10)
    held_zh, held_en = probe.extra_tests["tv4dialog-test"][0]
    train_zh, train_en = next(p for p in probe.train[probe.main_train_size :])
    cmn_test_zh = probe.test[0][0]
    lines = [
        f"{held_en}\t{held_zh.replace('，', '').rstrip('？')}！\tx",  # the held-out Chinese, other punctuation
        f"Test.\t{cmn_test_zh}\tx",  # a cmn-eng test sentence
        "Kept.\t留下来。\tx",
    ]
    (root / "cmn-eng-extra" / "cmn-extra.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # a tv4dialog line of a training episode that says what a held-out one says
    episode = _episodes_of(root)[(train_zh, train_en)]
    with open(root / "tv4dialog" / "tv4dialog.tsv", "a", encoding="utf-8") as f:
        f.write(f"{held_zh.replace('，', ' ').rstrip('？')}\tSaid again.\t{episode}/99-99\n")
    splits = split_translation(root, seed=7, dev_size=4, test_size=4, extra=("cmn-eng-extra", "tv4dialog"),
                               dialogue_size=10)
    assert splits.extra_tests == probe.extra_tests
    assert ("留下来。", "Kept.") in splits.train
    assert splits.info["extra_dropped_held_out"] == 3
    assert splits.info["dialogues"]["tv4dialog"]["dropped_held_out"] == 1
    held = {bare(zh) for pairs in (splits.dev, splits.test, *splits.extra_tests.values(),
                                   *splits.extra_devs.values()) for zh, _ in pairs}
    assert not any(bare(zh) in held for zh, _ in splits.train)


def test_held_out_utterances_said_in_cmn_eng_are_dropped_from_the_slices(tmp_path):
    root = _write_data(tmp_path, malformed=False)
    probe = split_translation(root, seed=7, dev_size=4, test_size=4, extra=("tv4dialog",), dialogue_size=10)
    zh, en = probe.extra_tests["tv4dialog-test"][0]
    with open(root / "cmn-eng" / "cmn.txt", "a", encoding="utf-8") as f:
        f.write(f"{en}\t{zh.replace('，', ',')}\tx\n")
    splits = split_translation(root, seed=7, dev_size=4, test_size=4, extra=("tv4dialog",), dialogue_size=10)
    assert (zh, en) not in splits.extra_tests["tv4dialog-test"]
    assert splits.info["dialogues"]["tv4dialog"]["held_out_dropped_in_cmn_eng"] == 1
    assert splits.info["dialogues"]["tv4dialog"]["tv4dialog-test"]["episodes"] == \
        probe.info["dialogues"]["tv4dialog"]["tv4dialog-test"]["episodes"]


# --- the real file --------------------------------------------------------------------------------------------------


def test_the_real_tv4dialog_mix():
    folder = data_dir("cmn-eng", "cmn-eng-extra", "tv4dialog")
    corpus = read_tv4dialog(folder)
    assert len(corpus.pairs) + corpus.skipped == 235_441 and corpus.skipped == 0
    started = time.perf_counter()
    splits = split_translation(folder, extra=("cmn-eng-extra", "tv4dialog"))
    assert time.perf_counter() - started < 60
    record = splits.info["dialogues"]["tv4dialog"]
    for name in ("tv4dialog-test", "tv4dialog-dev"):
        episodes = record[name]["episodes"]
        assert sorted(e.split("/")[0] for e in episodes) == list(SERIES)  # one episode of each series
        assert 1_000 <= record[name]["pairs"] <= 1_800
    assert record["tv4dialog-test"]["pairs"] == len(splits.extra_tests["tv4dialog-test"]) == 1_203
    assert record["tv4dialog-dev"]["pairs"] == len(splits.extra_devs["tv4dialog-dev"]) == 1_320
    alone = split_translation(folder)
    assert (splits.dev, splits.test) == (alone.dev, alone.test)
    assert splits.train[: splits.main_train_size] == alone.train
    held = {bare(zh) for pairs in (*splits.extra_tests.values(), *splits.extra_devs.values()) for zh, _ in pairs}
    assert not any(bare(zh) in held for zh, _ in splits.train)  # no held-out utterance is said in train
    # (cmn.txt's own train may say a dev or test sentence with other punctuation; the extra data never does)
    held |= {bare(zh) for zh, _ in splits.dev + splits.test}
    assert not any(bare(zh) in held for zh, _ in splits.train[splits.main_train_size :])


def test_evaluate_scores_any_translation_model_on_the_held_out_episodes(tmp_path, capsys):
    """A model trained without tv4dialog is scored on the same held-out episodes as one trained with it."""
    import json

    from attention_core.cli import main
    from attention_core.data.tasks import get_task, split_translation
    from attention_core.data.vocab import Vocab
    from attention_core.decoding.folder import save_pretrained
    from attention_core.decoding.translator import Translator
    from attention_core.model.config import ModelConfig
    from attention_core.model.seq2seq import build_model

    root = _write_data(tmp_path / "data")
    src, tgt = Vocab(list("句子号第集好吗")), Vocab("line of okay sentence".split())
    cfg = ModelConfig(src_vocab_size=len(src), tgt_vocab_size=len(tgt), hidden_size=8, emb_size=8)
    translator = Translator(build_model(cfg), src, tgt, get_task("translation"), {"data": {"seed": 1234}})
    save_pretrained(translator, tmp_path / "m")
    report = tmp_path / "r.json"
    argv = ["evaluate", "--model", str(tmp_path / "m"), "--data", str(root), "--report", str(report)]
    assert main([*argv, "--split", "tv4dialog-test"]) == 0
    held_out = split_translation(root, extra=("tv4dialog",)).extra_tests["tv4dialog-test"]
    assert json.loads(report.read_text())["n"] == len(held_out) > 0
    assert main([*argv, "--split", "tv4dialog-dev"]) == 0
    assert main([*argv, "--split", "poetry-test"]) == 2
    assert "needs a couplet model" in capsys.readouterr().err
