"""Durations as the service writes them in messages and the OpenAPI document."""

import datetime as dt

import pytest

from chalicelib.domain.timestamps import in_words


@pytest.mark.parametrize(
    "span, words",
    [
        (dt.timedelta(hours=24), "24 hours"),
        (dt.timedelta(hours=1), "1 hour"),
        (dt.timedelta(minutes=90), "90 minutes"),
        (dt.timedelta(seconds=10), "10 seconds"),
        (dt.timedelta(seconds=61), "61 seconds"),
        (dt.timedelta(seconds=1), "1 second"),
        (dt.timedelta(0), "0 seconds"),
    ],
)
def test_a_duration_in_its_largest_whole_unit(span, words):
    assert in_words(span) == words
