"""The one-pass save of a large result: the file, the hash and the JSON length it reports
must be exactly what writing, hashing and ``json.dumps`` separately give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from blake3 import blake3
from hypothesis import given, settings
from hypothesis import strategies as st

import core.archive.streamed_write as streamed
from core.measure import json_chars, note_json_chars

# any code point, lone surrogates included (a tool's output can hold them)
pieces = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF),
                 min_size=1, max_size=24)


@settings(max_examples=60, deadline=None)
@given(st.lists(pieces, min_size=1, max_size=12), st.integers(1, 9))
def test_a_streamed_text_is_byte_exact_hashed_and_counted(tmp_path_factory, parts, slice_at):
    text = "".join(parts)
    folder = tmp_path_factory.mktemp("results")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(streamed, "SLICE", slice_at)  # slice boundaries anywhere, even mid-pair
        saved = streamed.stream_to_temp(folder, "result", text)
    data = Path(saved.tmp).read_bytes()
    assert data == text.encode("utf-8", "surrogatepass")
    assert saved.digest == blake3(data).hexdigest()
    assert saved.json_chars == len(json.dumps(text, ensure_ascii=False))
    saved.abandon()
    assert list(folder.iterdir()) == []


def test_a_noted_count_is_the_one_the_measure_uses(tmp_path: Path, monkeypatch) -> None:
    """The archive hands the count it made while saving to the measure, which must not read
    the text again, and must not use the count for another string that is merely equal."""
    import core.measure as measure

    text = 'log "line"\n' * 20_000
    saved = streamed.stream_to_temp(tmp_path, "result", text)
    note_json_chars(text, saved.json_chars)
    read: list = []
    real = measure.escape_extra
    monkeypatch.setattr(measure, "escape_extra", lambda data: read.append(data) or real(data))
    assert json_chars({"content": text}) == len(json.dumps({"content": text}))
    assert read == []
    equal = "".join(['log "line"\n'] * 20_000)
    assert json_chars(equal) == len(json.dumps(equal)) and read  # counted afresh
