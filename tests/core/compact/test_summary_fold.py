"""A summary of a summary folds the earlier facts in: bounded, readable, never nested."""

import asyncio
import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from core.compact.summarizer import OfflineSummarizer, offline_summary
from core.compact.summary import summary_message
from tests.core.compact.builders import assistant, make, prepare, result, results, use, user


def summary_body(message: dict) -> str:
    """The decoded summary inside a ``[Compacted]`` message."""
    encoded = message["content"].split("(reference only):\n", 1)[1].split("\n\nFull transcript")[0]
    return json.loads(encoded)


def grow(history: list[dict], k: int, constraint: str) -> list[dict]:
    """Append one user constraint and one tool round to ``history``."""
    tid = f"r{k}"
    return [
        *history,
        user(f"{constraint} (round {k})"),
        assistant(use(tid, path=f"src/mod_{k}.py"), text=f"Reading module {k} now."),
        results(result(tid, f"module {k}: " + "body " * 600)),
    ]


def compact_n_times(tmp_path, n: int, constraint: str) -> list[str]:
    comp, _ = make(tmp_path, context_limit=300, fit_preview=100, budget_preview=100,
                   max_messages=10**6)
    history = [user("Migrate every module; you must keep the public API.")]
    bodies = []
    for k in range(n):
        history = prepare(comp, grow(history, k, constraint), "migrate the modules")
        assert len(history) == 1, "each round ends in one summary message"
        bodies.append(summary_body(history[0]))
    return bodies


def test_a_summary_of_a_summary_is_not_nested_or_escaped(tmp_path):
    bodies = compact_n_times(tmp_path, 6, 'Always quote paths like "a b".')
    last = bodies[-1]
    assert '\\"' not in last and "\\n" not in last
    assert "[Compacted]" not in last and "Conversation summary" not in last
    assert last.count("Goal:") == 1
    # the facts of every earlier round survive the folding
    assert "you must keep the public API." in last
    assert 'Always quote paths like "a b". (round 0)' in last
    assert "src/mod_0.py" in last and "src/mod_5.py" in last
    assert "6×read_file" in last


def test_successive_summaries_stay_bounded(tmp_path):
    bodies = compact_n_times(tmp_path, 40, "Never touch the vendored code, it must stay as is.")
    # once every list is full (12 constraints, 24 files) only numbers' digits change
    assert max(len(b) for b in bodies[30:]) - len(bodies[29]) <= 10
    assert all(len(b) < 3_000 for b in bodies)


def test_the_count_of_summarised_messages_accumulates():
    first = offline_summary([user("go"), assistant(text="ok")], "go")
    folded = offline_summary(
        [summary_message("Compacted", "go", first, "t.jsonl"), user("more"),
         assistant(text="fine")], "go")
    assert "Messages summarised: 4" in folded


def test_long_text_is_never_cut_mid_word():
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
             "kappa"]
    request = " ".join(words * 20)
    note = " ".join(reversed(words * 30))
    text = offline_summary([user("you must " + request), assistant(text=note)], request)
    for line in text.splitlines():
        if line.endswith(":"):
            continue
        value = line.split(": ", 1)[-1].lstrip("- ")
        for token in re.findall(r"\S+", value.replace("…", " ")):
            assert token.strip(".,;()") in [*words, "you", "must"] or token.isdigit(), line


def test_earlier_goals_are_kept_when_the_request_changes():
    first = offline_summary([user("fix the login bug")], "fix the login bug")
    folded = offline_summary([summary_message("Compacted", "fix the login bug", first,
                                              "t.jsonl"), user("now add tests")],
                             "now add tests")
    assert "Goal: now add tests" in folded and "fix the login bug" in folded


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1,
                        max_size=300), min_size=1, max_size=8),
       st.integers(min_value=2, max_value=6))
def test_folding_is_bounded_and_never_nests_for_any_text(texts, rounds):
    summarizer = OfflineSummarizer()
    history: list[dict] = []
    sizes = []
    for k in range(rounds):
        for t in texts:
            history.append(user("must " + t))
            history.append(assistant(text=t))
        text = asyncio.run(summarizer.summarize(history, "the task", "[]"))
        assert "[Compacted]" not in text and "Conversation summary" not in text
        assert '\\"' not in text or any('\\"' in t for t in texts)
        sizes.append(len(text))
        history = [summary_message("Compacted", "the task", text, f"t{k}.jsonl")]
    assert max(sizes) < 6_000


def test_a_summary_in_another_format_is_kept_as_one_clipped_line():
    prose = ('The user wants the "auth" package refactored.\nThey said: always use tabs. '
             + "More detail follows here. " * 80)
    folded = offline_summary([summary_message("Compacted", "go", prose, "t.jsonl"),
                              user("next")], "go")
    [line] = [x for x in folded.splitlines() if x.startswith("Earlier summary: ")]
    assert 'The user wants the "auth" package refactored. They said: always use tabs.' in line
    assert len(line) < 850 and line.endswith("…") and "\\" not in line
    again = offline_summary([summary_message("Compacted", "go", folded, "t2.jsonl")], "go")
    assert again.count("Earlier summary: ") == 1 and "The user wants" in again
