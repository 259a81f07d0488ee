"""Hub errors become one line that says what failed; local errors are not blamed on the network."""

import pytest

from attention_core.data.hubio import HubError, check_repo_id, hub_errors


@pytest.mark.parametrize("repo_id", ["a/b/c", "you/bad name", "you//x", "-you/x", "a" * 97 + "/x"])
def test_a_bad_repo_id_gets_the_rule(repo_id: str) -> None:
    with pytest.raises(HubError, match="is not a Hub repo id: write owner/name"):
        check_repo_id(repo_id)


def test_a_good_repo_id_passes() -> None:
    check_repo_id("you/attention-lab-couplet.v2")


def test_offline_is_named() -> None:
    from huggingface_hub.errors import OfflineModeIsEnabled

    with pytest.raises(HubError, match="cannot download 'you/m': offline"), hub_errors("download", "you/m"):
        raise OfflineModeIsEnabled("offline")


def test_a_connection_failure_is_the_network() -> None:
    with pytest.raises(HubError, match="cannot reach the Hub to push to 'you/m'"), hub_errors("push to", "you/m"):
        raise ConnectionError("connection refused")


def test_a_local_error_passes_through() -> None:
    with pytest.raises(PermissionError), hub_errors("download", "you/m"):
        raise PermissionError("read-only folder")
