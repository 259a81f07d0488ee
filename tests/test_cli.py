import pytest
from corpus import data_dir

from attention_core.cli import main
from attention_core.decoding.translator import InputError


def test_translate_prints_text_and_alignment(model_dir, capsys):
    assert main(["translate", "--model", str(model_dir), "--show-attention", "我喜欢猫", "--beam", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    header = out[1].split()
    assert header == ["我", "喜", "欢", "<unk>"]  # 猫 is unknown and shown as such
    assert any(line.startswith("p_t") for line in out)
    [coverage] = [line.split()[1:] for line in out if line.startswith("coverage")]
    rows = [line.split()[1:] for line in out[2:] if line and not line.startswith(("coverage", "p_t", "<eos>"))]
    assert len(coverage) == 4 and rows  # one total per source token: the sum of the output tokens' rows
    for column, total in enumerate(coverage):
        assert abs(sum(float(r[column]) for r in rows) - float(total)) < 0.01 * len(rows)


@pytest.mark.parametrize(
    "argv,message",
    [
        (["translate", "--model", "MODEL", "   "], "empty"),
        (["translate", "--model", "MODEL", "hello world"], "no Chinese characters"),
        (["translate", "--model", "MODEL", "123 ..."], "no Chinese characters"),
        (["translate", "--model", "MODEL", "我们" * 60], "the limit per sentence is 100"),
        (["couplet", "--model", "MODEL", "春风"], "translation model"),
        (["translate", "--model", "/no/such/folder", "你好"], "does not exist"),
        (["train", "--task", "translation", "--data", "/no/such/data", "--out", "OUT"], "not found"),
        (
            ["train", "--task", "couplet", "--data", "DATA", "--out", "OUT", "--attention", "local-p"],
            "window",
        ),
    ],
)
def test_bad_input_is_one_clear_error_line(model_dir, tmp_path, capsys, argv, message):
    argv = [a.replace("MODEL", str(model_dir)).replace("OUT", str(tmp_path / "o")) for a in argv]
    argv = [str(data_dir()) if a == "DATA" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and message in err and "Traceback" not in err


def test_unknown_variant_is_rejected_with_the_valid_names(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["train", "--task", "translation", "--out", "x", "--score", "cosine"])
    assert exit_.value.code == 2
    assert "scaled_dot" in capsys.readouterr().err


def test_a_paragraph_prints_one_line_and_one_alignment_per_sentence(model_dir, capsys):
    assert main(["translate", "--model", str(model_dir), "--show-attention", "我喜欢猫。今天很好！"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()[0]) > 0 and "[sentence 1]" in out and "[sentence 2]" in out
    assert out.index("[sentence 1]") < out.index("[sentence 2]")
    assert out.split("[sentence 2]")[1].splitlines()[1].split() == ["今", "天", "很", "好", "<unk>"]


def test_init_with_an_unreadable_split_is_refused_unless_the_flags_say_it(tmp_path):
    """A model whose meta["data"] has a mistyped seed: continuing it on its own split is refused (the split cannot be
    drawn again), unless --split-seed and --extra give what the record cannot."""
    import argparse

    from attention_core.cli import _training_data
    from attention_core.data.info import DataInfo
    from attention_core.training.trainconfig import TrainError

    unreadable = DataInfo.read({"seed": "1234", "extra": "tv4dialog"})
    args = argparse.Namespace(split_seed=None, extra=None, init="m", task="couplet", corpus="c.tsv", dev=None,
                              test=None)
    with pytest.raises(TrainError, match="its data split is unreadable; give --split-seed and --extra"):
        _training_data(args, [], None, unreadable)
    with pytest.raises(TrainError, match="unreadable"):  # the extra corpora still come from the record
        _training_data(argparse.Namespace(**{**vars(args), "split_seed": 7}), [], None, unreadable)
    given = argparse.Namespace(**{**vars(args), "split_seed": 7, "extra": []})
    with pytest.raises(InputError, match="--corpus, --dev and --test are for a corpus of your own"):
        _training_data(given, [], None, unreadable)  # past the record: the next check speaks
