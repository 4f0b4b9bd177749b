"""Names on one line (decisions §5, §15): trimmed, bounded, and no newline or tab of any kind Unicode knows."""

import pytest

from chalicelib.domain.category import CategoryBody
from chalicelib.domain.common import ValidationFailed, one_line_name, parse
from chalicelib.domain.deposit_types import DepositBody
from chalicelib.domain.product import Product

BREAKS = ["\t", "\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("character", BREAKS)
def test_every_line_break_and_the_tab_are_refused_inside_a_name(character):
    assert character.splitlines() != [character] or character == "\t"  # what str.splitlines breaks on, and the tab
    with pytest.raises(ValueError, match="newlines or tabs"):
        one_line_name(f"ab{character}cd", 3, 64)
    for model, body in (
        (CategoryBody, {}),
        (DepositBody, {"price": 1}),
        (Product, {"status": "ACTIVE", "category": "drinks", "price": 1}),
    ):
        with pytest.raises(ValidationFailed) as refused:
            parse(model, {**body, "name": f"ab{character}cd"})
        assert [e.path for e in refused.value.errors] == ["name"]


@pytest.mark.parametrize("name", ["abc", "a\u00a0b\u200bc", "  Kiste  ", "x" * 64])
def test_other_characters_and_spaces_around_are_kept_or_trimmed(name):
    assert one_line_name(name, 3, 64) == name.strip()
    assert one_line_name(f"\u2028{name}\n", 3, 64) == name.strip()  # around the name: trimmed, not inside it


@pytest.mark.parametrize("name, rule", [("ab", "3 to 64"), ("x" * 65, "3 to 64")])
def test_the_length_counts_after_trimming(name, rule):
    with pytest.raises(ValueError, match=rule):
        one_line_name(f"  {name}  ", 3, 64)
