"""The gateway's regular expressions give the same matches on the fast path (the text's
bytes, ASCII or UTF-8, handed to RE2's matcher directly) as through google-re2's own
Python layer, for every
pattern the gateway compiles, on text that varies words, digits, punctuation, spacing,
case and non-ASCII letters together."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.context.linear_regex import AsciiMatch, Utf8Match, _Linear, compile_linear
from gateway.context.people_text import word_set

MODULES = (
    "gateway.context.people_patterns",
    "gateway.context.people_spans",
    "gateway.context.people_conversation",
    "gateway.context.people_words",
    "gateway.context.people_numbers",
    "gateway.context.summaries",
    "gateway.context.episode_card",
    "gateway.loops.words",
)


def _patterns() -> list[_Linear]:
    found: dict[int, _Linear] = {}
    for name in MODULES:
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, _Linear):
                found[id(value)] = value
    return list(found.values())


PATTERNS = _patterns()

WORDS = sorted(
    word_set(
        "my order ORD-48213 was 129,90 reais sou a Ana Souza moro em Niteroi rua das Flores "
        "12 email ana.s@x.com tel 21 98765-4321 pedido 305133 hoje amanha 12/03 until friday "
        "no lo recibi mi nombre es Luis de novo again R$ 50 USD 19.99 por que n da pra"
    )
)
PIECES = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from([" ", "  ", ",", ".", "?", "!", "\n", "-", "@", ":", "/"]),
    st.text(alphabet="abcXYZ0123456789 .,", min_size=1, max_size=6),
    st.sampled_from(["São", "não", "ação", "€", "é", "ñ", "🙂"]),  # non-ASCII: UTF-8 bytes
)
TEXTS = st.lists(PIECES, max_size=40).map("".join)


def _shape(match: Any) -> Any:
    if match is None:
        return None
    count = len(match.groups()) + 1
    return tuple((match.group(i), match.start(i), match.end(i)) for i in range(count))


@settings(max_examples=150, deadline=None)
@given(text=TEXTS, pos=st.integers(min_value=-2, max_value=60))
def test_every_gateway_pattern_matches_alike_on_both_paths(text: str, pos: int) -> None:
    assert len(PATTERNS) > 40  # the modules' patterns were found
    for pattern in PATTERNS:
        layer = pattern._layer
        assert _shape(pattern.search(text)) == _shape(layer.search(text))
        assert _shape(pattern.search(text, pos)) == _shape(layer.search(text, pos))
        assert _shape(pattern.match(text, pos)) == _shape(layer.match(text, pos))
        assert [_shape(m) for m in pattern.finditer(text)] == [
            _shape(m) for m in layer.finditer(text)
        ]
        assert pattern.split(text) == layer.split(text)
        assert pattern.split(text, 2) == layer.split(text, 2)
        assert pattern.sub(lambda m: f"<{m.group(0)}>", text) == layer.sub(
            lambda m: f"<{m.group(0)}>", text
        )
        assert pattern.sub("[x]", text, 3) == layer.sub("[x]", text, 3)
        data = text.encode()  # bytes (the classifier's): byte offsets on both paths
        assert _shape(pattern.search(data, pos)) == _shape(layer.search(data, pos))


def test_ascii_text_takes_the_fast_path_and_other_text_its_utf8_bytes() -> None:
    words: Any = compile_linear(r"(\w+)(x)?")
    assert isinstance(words.search("plain words"), AsciiMatch)
    assert isinstance(words.search("São Paulo"), Utf8Match)
    assert words.search("São Paulo").group(0) == "S"  # RE2's \w is ASCII
    # offsets count characters, not bytes: "ã" is two bytes, "€" three
    assert [m.span() for m in words.finditer("São € Paulo")] == [(0, 1), (2, 3), (6, 11)]
    assert words.search("São € Paulo", 4).span() == (6, 11)
    found = list(words.finditer("ação é não"))  # offsets asked out of order, then again
    assert [m.span() for m in reversed(found)] == [(9, 10), (7, 8), (3, 4), (0, 1)]
    assert [m.start() for m in found] == [0, 3, 7, 9]

    assert [m.span() for m in compile_linear(r"x*").finditer("aé€")] == [  # type: ignore[attr-defined]
        (0, 0),
        (1, 1),
        (2, 2),
        (3, 3),
    ]
    found = [m.group(1) for m in words.finditer("a bb ccc")]
    assert found == ["a", "bb", "ccc"]
    assert words.search("a").group(2) is None  # a group that took no part
    empty = compile_linear(r"x*")
    assert [m.span() for m in empty.finditer("ab")] == [(0, 0), (1, 1), (2, 2)]  # type: ignore[attr-defined]
    assert isinstance(words.search(b"bytes too"), AsciiMatch)
    assert words.search(b"bytes too").group(0) == b"bytes"


def test_a_pattern_that_could_end_inside_a_character_is_refused() -> None:
    with pytest.raises(ValueError, match="any byte"):
        compile_linear(r"order \C+")
    compile_linear(r"a\\C")  # an escaped backslash, then C
