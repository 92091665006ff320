"""The spec's conformance cases (§11) and worked examples (§5.4), in pure Python."""

from __future__ import annotations

import pytest

from session_studio.core import Session, build_session_context, plan_compaction
from session_studio.core.cut_points import find_cut_point
from session_studio.core.file_ops import FileOps, compute_file_lists, format_file_operations
from session_studio.core.jsvalue import js_number_to_string, js_sort_key, js_stringify, u16len
from session_studio.core.messages import convert_to_llm
from session_studio.core.overflow import is_context_overflow
from session_studio.core.profile import PROFILE_0_80_2
from session_studio.core.serialize import serialize_conversation
from session_studio.core.tokens import (
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    should_compact,
)
from tests.core.util import HEADER, A, T, U, call, session_of, to_bytes


def cut(session: Session, keep: int):
    path = session.path_indices(session.leaf_index())
    plan = plan_compaction(session, path)
    fast = plan.cut(keep)
    slow = find_cut_point([session.records[i] for i in path], plan.boundary.start, plan.boundary.end, keep)
    assert fast == slow
    return fast, plan


# --- parsing and migration -------------------------------------------------------------------
def test_empty_and_headerless_files_reset() -> None:
    for data in (b"", b'{"type":"message","id":"1"}\n', b"not json\n"):
        s = Session.from_bytes(data)
        assert s.reset and s.records == [] and s.header is None


def test_malformed_middle_line_is_dropped_and_reported() -> None:
    data = (
        to_bytes([HEADER])
        + b"not valid json\n"
        + to_bytes(
            [
                {
                    "type": "message",
                    "id": "m",
                    "parentId": None,
                    "timestamp": "t",
                    "message": {"role": "user", "content": "x"},
                }
            ]
        )
    )
    s = Session.from_bytes(data)
    assert len(s.records) == 1
    assert [(i.line, i.kind, i.dropped) for i in s.issues] == [(2, "malformed", True)]


def test_garbage_before_header_is_accepted() -> None:
    s = Session.from_bytes(b"garbage\n" + to_bytes([HEADER]))
    assert not s.reset and s.header is not None


def test_v1_migration_assigns_ids_and_parents() -> None:
    h = {"type": "session", "id": "x", "timestamp": "2025-01-01T00:00:00Z", "cwd": ""}
    m1 = {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "a"}}
    s = Session.from_bytes(to_bytes([h, m1, dict(m1)]))
    assert s.migrated and s.header["version"] == 3
    a, b = s.entries()
    assert len(a["id"]) == 8 and a["parentId"] is None and b["parentId"] == a["id"]


def test_non_object_line_kept_and_breaks_leaf() -> None:
    data = (
        to_bytes(
            [
                HEADER,
                {
                    "type": "message",
                    "id": "m",
                    "parentId": None,
                    "timestamp": "t",
                    "message": {"role": "user", "content": "x"},
                },
            ]
        )
        + b"123\nnull\n0\n"
    )
    s = Session.from_bytes(data)
    assert len(s.records) == 2 and s.entries()[1] == 123
    assert build_session_context(s).messages() == []


def test_hook_message_renamed_in_v2() -> None:
    h = dict(HEADER, version=2)
    e = {
        "type": "message",
        "id": "a",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:00.002Z",
        "message": {
            "role": "hookMessage",
            "customType": "h",
            "content": "hk",
            "display": True,
            "timestamp": 2,
        },
    }
    s = Session.from_bytes(to_bytes([h, e]))
    ctx = build_session_context(s)
    assert ctx.messages()[0]["role"] == "custom"
    assert convert_to_llm(ctx.messages()) == [
        {"role": "user", "content": [{"type": "text", "text": "hk"}], "timestamp": 2}
    ]


def test_v1_compaction_index_counts_the_header() -> None:
    h = {"type": "session", "id": "x", "timestamp": "2025-01-01T00:00:00Z", "cwd": ""}
    u = {"type": "message", "timestamp": "2025-01-01T00:00:01Z", "message": {"role": "user", "content": "a"}}
    c1 = {
        "type": "compaction",
        "timestamp": "2025-01-01T00:00:02Z",
        "summary": "one",
        "firstKeptEntryIndex": 1,
        "tokensBefore": 1,
    }
    c2 = {
        "type": "compaction",
        "timestamp": "2025-01-01T00:00:03Z",
        "summary": "two",
        "firstKeptEntryIndex": 0,
        "tokensBefore": 1,
    }
    s = Session.from_bytes(to_bytes([h, u, c1, c2]))
    ents = s.entries()
    assert ents[1]["firstKeptEntryId"] == ents[0]["id"] and "firstKeptEntryIndex" not in ents[1]
    assert "firstKeptEntryId" not in ents[2]
    assert [m["summary"] for m in build_session_context(s).messages()] == ["two"]


# --- labels, names, tree -----------------------------------------------------------------------
def test_labels_last_wins_and_clear() -> None:
    s = session_of(
        U("a"),
        {"type": "label", "targetId": "e0", "label": "L1"},
        {"type": "label", "targetId": "e0", "label": ""},
        {"type": "label", "targetId": "e1", "label": "LB"},
    )
    assert s.label_of("e0") is None and s.label_of("e1") == "LB"


def test_session_name_last_wins_blank_clears() -> None:
    s = session_of(
        U("a"), {"type": "session_info", "name": "  My name  "}, {"type": "session_info", "name": "Final"}
    )
    assert s.session_name() == "Final"
    s = session_of(U("a"), {"type": "session_info", "name": "x"}, {"type": "session_info", "name": "   "})
    assert s.session_name() is None


def test_leaf_after_load_is_last_line() -> None:
    s = session_of(U("a"), A("b"), {"type": "session_info", "name": "n"})
    assert s.leaf_id == "e2"


def test_children_in_file_order() -> None:
    s = session_of(
        U("a"),
        dict(U("c"), parentId="e0", timestamp="2025-01-01T00:00:09Z"),
        dict(U("b"), parentId="e0", timestamp="2025-01-01T00:00:06Z"),
    )
    assert s.children("e0") == [1, 2]


# --- context -----------------------------------------------------------------------------------
def test_settings_from_path() -> None:
    s = session_of(
        {"type": "model_change", "provider": "p1", "modelId": "m1"},
        U("u"),
        A("a"),
        {"type": "model_change", "provider": "p2", "modelId": "m2"},
        {"type": "thinking_level_change", "thinkingLevel": "high"},
        {"type": "thinking_level_change", "thinkingLevel": "low"},
    )
    ctx = build_session_context(s)
    assert ctx.model == {"provider": "p2", "modelId": "m2"} and ctx.thinking_level == "low"


def test_single_compaction_context() -> None:
    s = session_of(
        U("first"),
        A("response1"),
        U("second"),
        A("response2"),
        {"type": "compaction", "summary": "S", "firstKeptEntryId": "e2", "tokensBefore": 5},
        U("third"),
        A("response3"),
    )
    msgs = build_session_context(s).messages()
    assert [m["role"] for m in msgs] == ["compactionSummary", "user", "assistant", "user", "assistant"]
    assert msgs[1]["content"] == "second"


def test_first_kept_not_on_path() -> None:
    s = session_of(
        U("u1"),
        A("a1"),
        {"type": "compaction", "summary": "S", "firstKeptEntryId": "missing", "tokensBefore": 1},
        U("u2"),
    )
    assert [m.get("content", m.get("summary")) for m in build_session_context(s).messages()] == ["S", "u2"]


def test_empty_branch_summary_skipped_and_wrappers() -> None:
    s = session_of(U("u1"), {"type": "branch_summary", "fromId": "e0", "summary": ""}, U("u2"))
    assert len(build_session_context(s).messages()) == 2
    out = convert_to_llm(
        [
            {"role": "compactionSummary", "summary": "CS", "timestamp": 1},
            {"role": "branchSummary", "summary": "BS", "timestamp": 1},
        ]
    )
    assert out[0]["content"][0]["text"] == (
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\nCS\n</summary>"
    )
    assert out[1]["content"][0]["text"] == (
        "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nBS</summary>"
    )


def test_bash_execution_text() -> None:
    m = {
        "role": "bashExecution",
        "command": "npm test",
        "output": "",
        "exitCode": 1,
        "truncated": True,
        "fullOutputPath": "/tmp/o.txt",
        "timestamp": 1,
    }
    assert convert_to_llm([m])[0]["content"][0]["text"] == (
        "Ran `npm test`\n(no output)\n\nCommand exited with code 1\n\n[Output truncated. Full output: /tmp/o.txt]"
    )
    assert convert_to_llm([dict(m, excludeFromContext=True)]) == []


# --- tokens ------------------------------------------------------------------------------------
def test_token_estimates() -> None:
    img = {"type": "image", "data": "", "mimeType": "image/png"}
    assert (
        estimate_tokens(
            {
                "role": "user",
                "content": [{"type": "text", "text": "hello "}, img, {"type": "text", "text": "world"}],
            }
        )
        == 1203
    )
    assert estimate_tokens({"role": "user", "content": "😀"}) == 1
    assert (
        estimate_tokens(
            {"role": "assistant", "content": [{"type": "text", "text": ""}, call("read", path="a.ts")]}
        )
        == 5
    )
    assert estimate_tokens({"role": "bashExecution", "command": "ls", "output": "x" * 400}) == 101
    assert (
        calculate_context_tokens({"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "totalTokens": 0})
        == 10
    )


def test_estimate_context_tokens_example() -> None:
    msgs = [
        {"role": "user", "content": "x" * 40},
        {"role": "assistant", "content": [], "usage": {"totalTokens": 1000}, "stopReason": "stop"},
        {"role": "user", "content": "x" * 41},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "abcd"}],
            "usage": {"totalTokens": 5000},
            "stopReason": "error",
        },
        {"role": "toolResult", "content": [{"type": "text", "text": "x" * 8}]},
    ]
    ct = estimate_context_tokens(msgs)
    assert (ct.tokens, ct.usage_tokens, ct.trailing_tokens, ct.last_usage_index) == (1014, 1000, 14, 1)


def test_should_compact_and_overflow() -> None:
    assert should_compact(183617, 200000, 16384) and not should_compact(183616, 200000, 16384)

    def overflows(message: dict[str, object], window: int = 0) -> bool:
        return is_context_overflow(message, window, PROFILE_0_80_2)

    err = {"stopReason": "error", "errorMessage": "ThrottlingException: Too many tokens, please wait"}
    assert overflows(err)
    assert not overflows({"stopReason": "error", "errorMessage": "Rate limit: prompt is too long"})
    assert overflows({"stopReason": "stop", "usage": {"input": 60000, "cacheRead": 40001}}, 100000)
    assert overflows({"stopReason": "length", "usage": {"input": 99000, "cacheRead": 0, "output": 0}}, 100000)
    assert not overflows(
        {"stopReason": "length", "usage": {"input": 98999, "cacheRead": 0, "output": 0}}, 100000
    )
    # pi adds usage.input + usage.cacheRead as JavaScript does: without cacheRead that is NaN
    assert not overflows({"stopReason": "length", "usage": {"input": 99000, "output": 0}}, 100000)


# --- cut points (examples A-G) -----------------------------------------------------------------
def test_example_a_clean_cut() -> None:
    c, _ = cut(session_of(U(400), A(400), U(400), A(400)), 150)
    assert (c.first_kept_index, c.turn_start_index, c.is_split_turn) == (2, -1, False)


def test_example_b_split_turn() -> None:
    c, _ = cut(session_of(U(400), A(400), T(400), A(400), T(400), A(400)), 150)
    assert (c.first_kept_index, c.turn_start_index, c.is_split_turn) == (5, 0, True)


def test_example_c_metadata_before_user() -> None:
    s = session_of(U(400), A(400), {"type": "thinking_level_change", "thinkingLevel": "high"}, U(400), A(400))
    c, plan = cut(s, 150)
    assert (c.first_kept_index, c.turn_start_index, c.is_split_turn) == (2, 0, True)
    prep = plan.prepare(150)
    assert prep is not None and prep.messages_to_summarize == [] and len(prep.turn_prefix_messages) == 2


def test_example_d_oversized_tool_result() -> None:
    s = session_of(U(40), A(40), U(40), A(blocks=[call("bash", command="x")]), T(100000))
    c, plan = cut(s, 100)
    assert c.first_kept_index == 0 and plan.prepare(100) is None


def test_example_e_custom_message_not_counted() -> None:
    s = session_of(
        U(400),
        A(400),
        {"type": "custom_message", "customType": "x", "content": "x" * 400, "display": True},
        A(400),
    )
    c, _ = cut(s, 150)
    assert (c.first_kept_index, c.turn_start_index, c.is_split_turn) == (1, 0, True)


def test_example_f_previous_compaction() -> None:
    s = session_of(
        U(400),
        A(400),
        U(400),
        A(400),
        {"type": "compaction", "summary": "PREV", "firstKeptEntryId": "e2", "tokensBefore": 1},
        U(400),
        A(400),
    )
    c, plan = cut(s, 150)
    assert c.first_kept_index == 5 and not c.is_split_turn
    prep = plan.prepare(150)
    assert prep is not None and [m["role"] for m in prep.messages_to_summarize] == ["user", "assistant"]
    assert prep.previous_summary == "PREV"


def test_example_g_bash_execution_cut() -> None:
    bash = {"type": "message", "message": {"role": "bashExecution", "command": "ls", "output": "x" * 400}}
    c, _ = cut(session_of(U(400), A(400), bash, A(400)), 150)
    assert (c.first_kept_index, c.turn_start_index, c.is_split_turn) == (2, 2, True)


def test_preparation_with_file_ops() -> None:
    s = session_of(
        U(400),
        A(blocks=[call("read", path="a.ts")]),
        T(400),
        A(blocks=[call("edit", path="a.ts"), call("write", path="b.ts"), call("read", path="c.ts")]),
        T(10),
        U(400),
        A(400),
    )
    _, plan = cut(s, 150)
    prep = plan.prepare(150)
    assert prep is not None and prep.first_kept_entry_id == "e5"
    assert prep.file_lists == (["c.ts"], ["a.ts", "b.ts"])
    assert prep.tokens_before == 2


# --- summarisation text ------------------------------------------------------------------------
def test_serialization_layout() -> None:
    msgs = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hello "},
                {"type": "image"},
                {"type": "text", "text": "world"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "think1"},
                {"type": "text", "text": "t1"},
                call("bash", command="ls -la", timeout=5, obj={"a": [1, "x"]}),
                {"type": "thinking", "thinking": "think2"},
                {"type": "text", "text": "t2"},
                call("read", path='a"b.ts'),
            ],
        },
        {"role": "toolResult", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]
    assert serialize_conversation(msgs) == (
        "[User]: hello world\n\n[Assistant thinking]: think1\nthink2\n\n[Assistant]: t1\nt2\n\n"
        '[Assistant tool calls]: bash(command="ls -la", timeout=5, obj={"a":[1,"x"]}); read(path="a\\"b.ts")\n\n'
        "[Tool result]: ab"
    )


@pytest.mark.parametrize(
    ("n", "suffix"),
    [
        (1500, None),
        (2001, "\n\n[... 1 more characters truncated]"),
        (5000, "\n\n[... 3000 more characters truncated]"),
    ],
)
def test_tool_result_truncation(n: int, suffix: str | None) -> None:
    out = serialize_conversation([{"role": "toolResult", "content": [{"type": "text", "text": "x" * n}]}])
    if suffix is None:
        assert out == "[Tool result]: " + "x" * n
    else:
        assert out == "[Tool result]: " + "x" * 2000 + suffix


def test_file_list_formatting_js_sort() -> None:
    ops = FileOps(
        read=dict.fromkeys(["z.ts", "a.ts"]), edited=dict.fromkeys(["a.ts"]), written=dict.fromkeys(["B.ts"])
    )
    read, mod = compute_file_lists(ops)
    assert format_file_operations(read, mod) == (
        "\n\n<read-files>\nz.ts\n</read-files>\n\n<modified-files>\nB.ts\na.ts\n</modified-files>"
    )
    assert sorted(["ｆ", "🚀"], key=js_sort_key) == ["🚀", "ｆ"]


# --- JavaScript semantics ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("x", "s"),
    [
        (1e16, "10000000000000000"),
        (1e21, "1e+21"),
        (5e-05, "0.00005"),
        (1e-7, "1e-7"),
        (2.0, "2"),
        (-0.0, "0"),
        (2**63, "9223372036854776000"),
        (0.1, "0.1"),
    ],
)
def test_js_number_format(x: float, s: str) -> None:
    assert js_number_to_string(x) == s


def test_js_stringify_key_order_and_surrogates() -> None:
    assert js_stringify({"b": 1, "10": 2, "2": 3}) == '{"2":3,"10":2,"b":1}'
    assert js_stringify("\ud800") == '"\\ud800"'
    assert u16len("👨‍👩‍👧") == 8
