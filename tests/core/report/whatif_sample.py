"""A small hand-built :class:`~core.whatif.model.WhatIf`: three strategies over six requests,
with facts kept and dropped, a strategy that failed and one without a price, so the views of
a what-if are tested on figures fixed here rather than on a run of the strategies."""

from __future__ import annotations

from core.usage import Usage
from core.whatif.model import Fact, FactCheck, RequestCost, StrategyRun, WhatIf

FACTS = (
    Fact("toolu_1", "Read", 1, 4, "quote", "def load_config(path):"),
    Fact("toolu_2", "Bash", 2, 5, "reread", "src/app.py"),
    Fact("toolu_3", "Read", 3, 6, "quote", "TIMEOUT = 30"),
)


def requests(tokens: list[int], reads: list[int]) -> tuple[RequestCost, ...]:
    return tuple(RequestCost(index=i, chars=t * 3, tokens=t,
                             usage=Usage(input=t - r - 100, cache_write_5m=100, cache_read=r,
                                         output=50),
                             timestamp=f"2026-12-05T10:0{i}:00Z")
                 for i, (t, r) in enumerate(zip(tokens, reads, strict=True), 1))


def sample_whatif(window: int | None = 20_000) -> WhatIf:
    original = StrategyRun(
        name="original", description="as recorded",
        requests=requests([3_000, 6_000, 9_500, 14_000, 4_000, 7_500],
                          [0, 2_800, 5_800, 9_300, 0, 3_800]),
        compactions=1, results_left=2, results_recoverable=0,
        facts=tuple(FactCheck(f, visible=f.result_id != "toolu_2") for f in FACTS),
        lesson="one compaction at request 5 dropped the file it read again", cost=0.1234)
    s08 = StrategyRun(
        name="s08", description="ctxlab's pipeline at the course's limits",
        requests=requests([3_000, 5_500, 7_000, 6_000, 6_500, 7_000],
                          [0, 2_800, 5_000, 0, 5_800, 6_300]),
        side=Usage(input=2_000, output=300), side_calls=1, compactions=2, results_left=3,
        results_recoverable=3,
        facts=tuple(FactCheck(f, visible=f.result_id == "toolu_3") for f in FACTS),
        lesson="smaller peaks; two facts dropped before they were needed", cost=0.0987)
    masking = StrategyRun(
        name="observation-masking", description="keep the last 10 observations whole",
        requests=requests([3_000, 5_800, 8_000, 10_000, 12_000, 13_500],
                          [0, 2_800, 5_700, 7_900, 9_900, 11_900]),
        results_left=0, facts=tuple(FactCheck(f, visible=True) for f in FACTS),
        lesson="nothing masked: the session is shorter than 10 observations", cost=None)
    return WhatIf(path="/tmp/session.jsonl", format="claude-code", model="claude-sonnet-4-5",
                  requests=6, chars_per_token=3.0, ratio_source="usage", overhead_tokens=100,
                  window_tokens=window, strategies=(original, s08, masking),
                  price_model="claude-sonnet-4-5", summary_line="read 40 of 40 lines")
