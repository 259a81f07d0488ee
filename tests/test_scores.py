import math

import pytest
import torch
from torch.testing import assert_close

from attention_core.model.scores import DEFAULT_MAX_SOURCE_LEN, SCORES, ConcatScore, LocationScore, build_score


def test_registry_names_and_unknown_name_lists_valid_ones():
    assert set(SCORES) == {"dot", "scaled_dot", "general", "concat", "location"}
    with pytest.raises(ValueError) as err:
        build_score("cosine", 4, 4)
    for name in SCORES:
        assert name in str(err.value)


@pytest.mark.parametrize("name", list(SCORES))
def test_shape_is_b_t_s(name):
    score = build_score(name, 6, 6)
    keys, query = torch.randn(2, 5, 6), torch.randn(2, 3, 6)
    assert score(query, score.prepare(keys)).shape == (2, 3, 5)


def test_scaled_dot_is_dot_over_sqrt_d():
    keys, query = torch.randn(2, 5, 16), torch.randn(2, 3, 16)
    dot = build_score("dot", 16, 16)
    scaled = build_score("scaled_dot", 16, 16)
    assert_close(scaled(query, scaled.prepare(keys)), dot(query, dot.prepare(keys)) / math.sqrt(16))


def test_general_with_identity_equals_dot():
    keys, query = torch.randn(2, 5, 8), torch.randn(2, 3, 8)
    general = build_score("general", 8, 8)
    with torch.no_grad():
        general.W_a.weight.copy_(torch.eye(8))
    dot = build_score("dot", 8, 8)
    assert_close(general(query, general.prepare(keys)), dot(query, keys))


def test_general_allows_different_query_and_key_sizes():
    general = build_score("general", 3, 7)
    keys, query = torch.randn(2, 5, 7), torch.randn(2, 4, 3)
    expected = torch.einsum("btq,qk,bsk->bts", query, general.W_a.weight, keys)
    assert_close(general(query, general.prepare(keys)), expected)


def test_dot_rejects_mismatched_sizes():
    with pytest.raises(ValueError, match="query_size == key_size"):
        build_score("dot", 3, 4)


def test_concat_matches_a_plain_loop():
    score = ConcatScore(query_size=3, key_size=5, attention_size=4)
    keys, query = torch.randn(2, 6, 5), torch.randn(2, 3, 3)
    W, U, b, v = score.W_a.weight, score.U_a.weight, score.U_a.bias, score.v_a.weight[0]
    expected = torch.zeros(2, 3, 6)
    for bi in range(2):
        for t in range(3):
            for s in range(6):
                expected[bi, t, s] = v @ torch.tanh(W @ query[bi, t] + U @ keys[bi, s] + b)
    assert_close(score(query, score.prepare(keys)), expected)


def test_prepare_projects_keys_once_and_forward_does_not_touch_raw_keys():
    # concat's key projection must live in prepare(): forward on prepared keys gives the result,
    # and forward never calls U_a again (counted with a hook).
    score = ConcatScore(4, 4)
    calls = []
    score.U_a.register_forward_hook(lambda *_: calls.append(1))
    prepared = score.prepare(torch.randn(1, 5, 4))
    for _ in range(3):
        score(torch.randn(1, 1, 4), prepared)
    assert len(calls) == 1


def test_location_scores_each_position_by_its_own_row_of_w_a_times_the_query():
    score = LocationScore(query_size=3, key_size=5, max_source_len=6)
    keys, query = torch.randn(2, 4, 5), torch.randn(2, 3, 3)
    expected = torch.einsum("btq,sq->bts", query, score.W_a.weight[:4])  # rows 0..S-1 of W_a
    assert_close(score(query, score.prepare(keys)), expected)


def test_location_never_reads_the_keys_values():
    score = build_score("location", 4, 4, max_source_len=8)
    query = torch.randn(2, 3, 4)
    a, b = torch.randn(2, 5, 4), torch.randn(2, 5, 4) * 100
    assert_close(score(query, score.prepare(a)), score(query, score.prepare(b)))


def test_location_source_longer_than_its_rows_reuses_the_last_row():
    score = build_score("location", 4, 4, max_source_len=3)
    query = torch.randn(1, 2, 4)
    e = score(query, score.prepare(torch.randn(1, 7, 4)))  # (1, 2, 7)
    rows = query @ score.W_a.weight.T  # (1, 2, 3)
    assert_close(e[..., :3], rows)
    for s in range(3, 7):
        assert_close(e[..., s], rows[..., 2])


def test_location_without_a_length_gets_the_default_and_other_scores_ignore_it():
    assert build_score("location", 4, 4).W_a.out_features == DEFAULT_MAX_SOURCE_LEN
    assert type(build_score("general", 4, 4, max_source_len=9)).__name__ == "GeneralScore"
    with pytest.raises(ValueError, match="max_source_len >= 1"):
        LocationScore(4, 4, max_source_len=0)
