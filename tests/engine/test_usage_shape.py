"""The `usage` a pi 1.6.0 compaction or branch summary stores is the object pi-ai built for the
call, so its fields and their order depend on the API (pi-ai 1.6.0: openai-completions'
parseChunkUsage puts `reasoning` before `totalTokens`; anthropic-messages adds `cacheWrite1h` at
message_start and `reasoning` from thinking tokens, after the cost), and a split turn's two calls
are summed by combineUsage (extras before `totalTokens`, when either call has them)."""

from __future__ import annotations

from session_studio.engine.compaction import call_usage, combined_usage

COST = ["input", "output", "cacheRead", "cacheWrite", "total", "totalFromProvider"]


def _openai(n: int) -> dict[str, int]:
    return {"input": n, "output": 2, "cacheRead": 0, "cacheWrite": 0, "reasoning": 1, "totalTokens": n + 2}


def _anthropic(n: int) -> dict[str, int]:
    return {
        "input": n,
        "output": 3,
        "cacheRead": 4,
        "cacheWrite": 5,
        "totalTokens": n + 12,
        "cacheWrite1h": 5,
    }


def test_one_call_keeps_the_apis_fields_in_pi_ais_order() -> None:
    openai = call_usage(_openai(10))
    assert list(openai) == ["input", "output", "cacheRead", "cacheWrite", "reasoning", "totalTokens", "cost"]
    assert list(openai["cost"]) == COST and openai["reasoning"] == 1
    anthropic = call_usage({**_anthropic(10), "reasoning": 7})
    assert list(anthropic) == [
        "input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost", "cacheWrite1h", "reasoning",
    ]  # fmt: skip
    # no usage reported: pi-ai's initial object, zeros and a cost pi did not compute
    assert list(call_usage(None)) == ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"]
    assert "totalFromProvider" not in call_usage(None)["cost"]


def test_a_split_turn_sums_like_combine_usage() -> None:
    both = combined_usage([_anthropic(10), {**_anthropic(20), "reasoning": 7}])
    assert both is not None
    assert list(both) == [
        "input", "output", "cacheRead", "cacheWrite", "cacheWrite1h", "reasoning", "totalTokens", "cost",
    ]  # fmt: skip
    assert (both["input"], both["cacheWrite1h"], both["reasoning"], both["totalTokens"]) == (30, 10, 7, 54)
    assert list(both["cost"]) == COST and both["cost"]["totalFromProvider"] is False
    one_reported = combined_usage([_openai(10), None])
    assert one_reported is not None and one_reported["reasoning"] == 1 and "cacheWrite1h" not in one_reported
    neither = combined_usage([None, None])
    assert neither is not None and "reasoning" not in neither and "cacheWrite1h" not in neither
