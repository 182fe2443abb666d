"""A `--store` URL plait cannot use is quoted back as the user typed it (only a password is masked)."""

from __future__ import annotations

import pytest

from plait.runtime.store import StoreError, open_store


@pytest.mark.parametrize(
    "url, shown",
    [
        ("sqlite:///tmp/runs.db", "sqlite:///tmp/runs.db"),
        ("file:///srv/runs", "file:///srv/runs"),
        ("mysql://root:hunter2-pw@localhost/runs", "mysql://root:***@localhost/runs"),
    ],
)
def test_an_unusable_store_url_is_quoted_as_typed_with_only_the_password_masked(url, shown, tmp_path):
    with pytest.raises(StoreError) as raised:
        open_store(url, tmp_path)
    assert f"not `{shown}`" in str(raised.value)
    assert "hunter2-pw" not in str(raised.value)
