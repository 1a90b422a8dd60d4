"""Text from a model or a tool is made storable where it enters (agent/incoming.py)."""

from __future__ import annotations

from langchain_core.messages import AIMessage

from agent.incoming import TextStream, clean, clean_message


def test_nul_is_dropped_and_a_lone_surrogate_becomes_a_replacement_character():
    assert clean("a\x00b") == "ab"
    assert clean("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    assert clean("\udc00\ud800") == "\ufffd\ufffd"  # a pair in the wrong order is no pair
    assert clean("\ud83d\ude00") == "\U0001f600"  # a pair, as two escapes spell it
    assert clean("plain 한국어 😀") == "plain 한국어 😀"


def test_text_inside_lists_and_dicts_is_cleaned_keys_included():
    value = {"k\x00": ["x\ud800", {"y": "z\x00"}], "n": 1, "none": None}
    assert clean(value) == {"k": ["x\ufffd", {"y": "z"}], "n": 1, "none": None}


def test_a_surrogate_pair_split_across_pieces_is_joined():
    pieces: list[str] = []
    stream = TextStream(pieces.append)
    for piece in ["smile \ud83d", "\ude00 and", " \ud800", "x", "\x00", "end \ud83d"]:
        stream(piece)
    stream.close()
    assert "".join(pieces) == "smile \U0001f600 and \ufffdxend \ufffd"
    assert "".join(pieces) == clean("smile \ud83d\ude00 and \ud800x\x00end \ud83d")


def test_a_whole_message_is_cleaned_text_tool_calls_and_metadata():
    message = AIMessage(
        content="hi\x00",
        tool_calls=[{"name": "calc\ud800", "args": {"e": "1\x00"}, "id": "c1"}],
        invalid_tool_calls=[{"name": "x", "args": "{\x00", "id": "c2", "error": None}],
        response_metadata={"model_name": "m\x00"},
    )
    cleaned = clean_message(message)
    assert cleaned.content == "hi"
    assert [(c["name"], c["args"]) for c in cleaned.tool_calls] == [("calc\ufffd", {"e": "1"})]
    assert cleaned.invalid_tool_calls[0]["args"] == "{"
    assert cleaned.response_metadata["model_name"] == "m"
