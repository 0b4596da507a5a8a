"""The one table renderer (text_table): layout and bad rows."""

from __future__ import annotations

import pytest

from embedding_cache_checker.text_table import numeric_right, render_table


def test_left_and_right_columns_with_a_rule() -> None:
    text = render_table(["name", "n"], [["a", "1"], ["bbb", "22"]], right={1})
    assert text.splitlines() == ["name   n", "----  --", "a      1", "bbb   22"]


def test_numeric_right_keeps_the_first_column_left() -> None:
    lines = render_table(["impl", "ms", "vs"], [["seed", "3", "1.00x"]], numeric_right(3))
    assert lines.splitlines()[2] == "seed   3  1.00x"
    assert list(numeric_right(3)) == [1, 2]


def test_no_rows_gives_header_and_rule() -> None:
    assert render_table(["a", "bb"], [], right=set()) == "a  bb\n-  --"


def test_trailing_blanks_are_cut() -> None:
    text = render_table(["x", "long header"], [["1", ""]], right=set())
    assert all(line == line.rstrip() for line in text.splitlines())


def test_a_row_of_the_wrong_width_is_refused() -> None:
    with pytest.raises(ValueError, match="a row has 1 cells, headers 2"):
        render_table(["a", "b"], [["only one"]], right=set())
