"""explain_failure: the one translation from an exception to what the window says."""

from __future__ import annotations

from session_studio.core.errors import (
    SessionFileError,
    SessionLoadError,
    SessionStudioError,
    StaleSessionError,
    WriteError,
)
from session_studio.llm import LlmError
from session_studio.ui.errors import explain_failure


def test_a_refused_write_says_nothing_was_written() -> None:
    f = explain_failure(WriteError("the file is read-only"), "TB", "Labelling failed")
    assert f.title == "Labelling failed: nothing was written"
    assert f.text.startswith("the file is read-only") and "left as it was" in f.text


def test_a_stale_file_is_a_refused_write() -> None:
    assert explain_failure(StaleSessionError("pi appended"), "", "Fork failed").title.endswith(
        "nothing was written"
    )


def test_the_servers_user_message_is_shown_with_the_technical_line_folded_not_a_traceback() -> None:
    exc = LlmError("anthropic: HTTP 429: slow down", user_message="Rate limited: try again later.")
    f = explain_failure(exc, "Traceback (most recent call last): …", "The summary could not be generated")
    assert (f.title, f.text, f.details) == (
        "The summary could not be generated",
        "Rate limited: try again later.",
        "anthropic: HTTP 429: slow down",
    )


def test_a_file_pi_cannot_open_names_the_line() -> None:
    f = explain_failure(SessionLoadError("bad header", line=3), "TB", "Cannot open /x.jsonl")
    assert f.title == "pi cannot open this file (line 3)" and f.details == ""


def test_a_missing_file_says_what_to_check() -> None:
    f = explain_failure(SessionFileError("no such file"), "TB", "Cannot open /x.jsonl")
    assert f.title == "Cannot open /x.jsonl" and "exists and is readable" in f.text and f.details == ""


def test_an_error_raised_on_purpose_speaks_for_itself() -> None:
    f = explain_failure(SessionStudioError("no entry with that id"), "TB", "Cannot branch here")
    assert (f.text, f.details) == ("no entry with that id", "")


def test_an_unexpected_error_keeps_its_traceback() -> None:
    f = explain_failure(KeyError("x"), "Traceback …", "Renaming failed")
    assert f.title == "Renaming failed" and f.details == "Traceback …" and "x" in f.text
