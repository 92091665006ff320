"""A row's preview collapses whitespace from a head of the text only when the rest cannot matter."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from session_studio.ui.outline import one_line, preview_text


def _reference(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text[:limit] + ("…" if len(text) > limit else "")


#: words and every kind of whitespace str.split() knows (a no-break space, a line separator, CR LF)
_PIECES = st.sampled_from(
    ["a", "word", "é😀", "→", " ", "  ", "\n", "\r\n", "\t", "\u00a0", "\u2028", "\u3000"]
)


@settings(max_examples=400, deadline=None)
@given(
    pieces=st.lists(_PIECES, max_size=400),
    # runs of whitespace long enough that the head holds less than the limit after collapsing
    gap=st.integers(0, 3000),
    at=st.integers(0, 400),
    limit=st.sampled_from([1, 5, 20, 160]),
)
def test_one_line_is_the_whole_texts_collapse(pieces: list[str], gap: int, at: int, limit: int) -> None:
    text = "".join(pieces[:at]) + " " * gap + "".join(pieces[at:])
    assert one_line(text, limit) == _reference(text, limit)


def test_a_megabyte_of_output_and_a_head_of_whitespace() -> None:
    big = "line of tool output\n" * 50_000
    assert one_line(big, 160) == _reference(big, 160)
    spaced = " " * 5000 + "x" * 10 + " " * 3000 + "tail " * 100
    assert one_line(spaced, 160) == _reference(spaced, 160)
    value = {"type": "message", "message": {"role": "toolResult", "toolName": "bash", "content": big}}
    assert preview_text(value) == _reference("bash: " + big, 160)


def test_a_message_with_nothing_to_show_on_one_line_says_what_it_holds() -> None:
    """A model's reply of thinking and a text block of spaces (as in real sessions) showed an empty
    row; so did a message with no text. The row says what the entry holds instead."""

    def msg(role: str, content: object) -> dict[str, object]:
        return {"type": "message", "message": {"role": role, "content": content}}

    thinking = {"type": "thinking", "thinking": "plan the fix"}
    assert preview_text(msg("assistant", [thinking, {"type": "text", "text": "  \n "}])) == "(thinking only)"
    assert preview_text(msg("assistant", [thinking])) == "(thinking only)"
    assert preview_text(msg("assistant", [{"type": "text", "text": " "}])) == "(no text)"
    assert preview_text(msg("user", "")) == "(no text)"
    assert preview_text(msg("user", [])) == "(no text)"
    assert preview_text(msg("toolResult", "")) == "tool:"  # the tool's name says what it is
    assert preview_text(msg("assistant", [thinking, {"type": "text", "text": " done "}])) == "done"


def test_a_line_that_is_no_entry_object_shows_its_json() -> None:
    """pi keeps a line of JSON that is not an object (a damaged file's `true`, `42`, `"text"`) as an
    entry; its row showed Python's repr (True, None, 'just a string'). It shows the JSON as written."""
    assert [preview_text(v) for v in (True, None, 42, 1.5, [], "just a string")] == [
        "true",
        "null",
        "42",
        "1.5",
        "[]",
        '"just a string"',
    ]
    assert preview_text([{"type": "message"}]) == '[{"type":"message"}]'
    # an object without a type showed "None"; one with a type pi does not know shows the type
    assert preview_text({}) == "{}"
    assert preview_text({"type": 5, "id": "x"}) == '{"type":5,"id":"x"}'
    assert preview_text({"type": "future_kind", "id": "x"}) == "future_kind"


def test_a_calls_first_argument_is_shown_as_in_the_file_not_as_python() -> None:
    def row(v: object) -> str:
        call = {"type": "toolCall", "id": "c", "name": "todo", "arguments": {"items": v, "x": 1}}
        return preview_text({"type": "message", "message": {"role": "assistant", "content": [call]}})

    assert row(["a", "b"]) == '→ todo items=["a","b"]'
    assert row(None) == "→ todo items=null"
    assert row(True) == "→ todo items=true"
    assert row({"k": 1.0}) == '→ todo items={"k":1}'
    assert row("plain text") == "→ todo items=plain text"


def test_a_compactions_row_writes_its_tokens_before_as_the_inspector_does() -> None:
    row = {"type": "compaction", "tokensBefore": 34182, "summary": "s", "firstKeptEntryId": "e1"}
    assert preview_text(row).startswith("compaction · 34,182 tokens before · ")
    assert preview_text({**row, "tokensBefore": 34182.0}).startswith("compaction · 34,182 tokens before")
    # what is not a count is shown as stored
    assert preview_text({**row, "tokensBefore": "many"}).startswith("compaction · many tokens before")
    assert preview_text({**row, "tokensBefore": 1.5}).startswith("compaction · 1.5 tokens before")
