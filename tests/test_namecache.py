"""The on-disk cache of the names a corpus knows: found once per corpus, afresh when anything they depend on changes."""

import json

import pytest

from attention_core.editing import namecache
from attention_core.editing.namecache import cache_key, cached_known_names

SOURCES = ["谢尔顿来了。"] * 3 + ["张伟来了。", "谢尔顿和张伟。"]


@pytest.fixture
def finds(monkeypatch):
    """Count the calls of the finder the cache stands in front of."""
    calls = []
    real = namecache.known_names

    def counting(sources, min_count):
        calls.append(len(sources))
        return real(sources, min_count)

    monkeypatch.setattr(namecache, "known_names", counting)
    return calls


def test_the_names_are_found_once_and_read_back(tmp_path, finds):
    first = cached_known_names(SOURCES, min_count=4, folder=tmp_path)
    again = cached_known_names(list(SOURCES), min_count=4, folder=tmp_path)
    assert first == again == ["谢尔顿"] and finds == [5]
    assert [p.name for p in tmp_path.iterdir()] == [f"{cache_key(SOURCES, 4)}.json"]


def test_other_sources_another_count_or_another_finder_find_afresh(tmp_path, finds, monkeypatch):
    cached_known_names(SOURCES, min_count=4, folder=tmp_path)
    assert cached_known_names(SOURCES[:-1], min_count=4, folder=tmp_path) == []  # 谢尔顿 in 3 sources only
    assert cached_known_names(SOURCES, min_count=2, folder=tmp_path) == ["张伟", "谢尔顿"]
    assert finds == [5, 4, 5]
    # a source split differently is another corpus, not the same characters
    assert cache_key(["谢尔顿", "来了。"], 4) != cache_key(["谢尔顿来了。"], 4)
    assert cache_key(["a\0b", "c"], 4) != cache_key(["a", "b\0c"], 4)
    monkeypatch.setattr(namecache, "finder_version", lambda: "a changed finder")
    cached_known_names(SOURCES, min_count=4, folder=tmp_path)
    assert finds == [5, 4, 5, 5]


@pytest.mark.parametrize("damage", ["{not json", json.dumps({"names": ["x"]}), json.dumps([1, 2])])
def test_a_damaged_file_is_found_afresh_and_replaced(tmp_path, finds, damage):
    path = tmp_path / f"{cache_key(SOURCES, 4)}.json"
    path.write_text(damage, encoding="utf-8")
    assert cached_known_names(SOURCES, min_count=4, folder=tmp_path) == ["谢尔顿"]
    assert json.loads(path.read_text(encoding="utf-8")) == ["谢尔顿"] and finds == [5]


def test_a_cache_folder_that_cannot_be_written_costs_only_the_time(tmp_path, finds):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert cached_known_names(SOURCES, min_count=4, folder=blocked / "names") == ["谢尔顿"]
    assert cached_known_names(SOURCES, min_count=4, folder=blocked / "names") == ["谢尔顿"] and finds == [5, 5]


def test_the_default_folder_is_in_the_users_cache(tmp_path, monkeypatch, finds):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cached_known_names(SOURCES, min_count=4)
    assert (tmp_path / "attention-lab" / "known-names" / f"{cache_key(SOURCES, 4)}.json").is_file()


def test_each_call_says_whether_it_found_the_names_or_read_them(tmp_path, finds):
    events = []
    cached_known_names(SOURCES, min_count=4, folder=tmp_path, report=events.append)
    cached_known_names(SOURCES, min_count=4, folder=tmp_path, report=events.append)
    assert [(e["event"], e["cached"], e["names"]) for e in events] == [("known-names", False, 1),
                                                                       ("known-names", True, 1)]
    assert events[0]["key"] == cache_key(SOURCES, 4)[:16] and events[0]["seconds"] >= 0
