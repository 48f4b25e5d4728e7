"""The report as one self-contained HTML page: its sections, inline CSS and a search box.

Nothing is fetched: the styles and the script are inline, the timeline is an inline SVG, and
a Content-Security-Policy forbids every load from anywhere (``default-src 'none'``), so a
page opened from an issue attachment asks no server for anything, whatever a transcript
holds. The search is a few lines of plain JavaScript: it hides the requests, stages and
prompt sections whose text does not hold the query, opens those that do, and says how many
matched. It only reads text and toggles attributes, never writes HTML.
"""

from __future__ import annotations

from collections.abc import Callable

from core.report.model import Report
from core.report.sections import header, requests, stages, system_and_tools, timeline
from core.report.whatif import whatif_section

GENERATOR = "ctxlab report"  # the mark that tells a report from any other file


def whatif(report: Report) -> str:
    """The what-if section, for a recorded session compared under other strategies."""
    return whatif_section(report.whatif) if report.whatif is not None else ""


SECTIONS: tuple[Callable[[Report], str], ...] = (header, timeline, whatif, requests, stages,
                                                 system_and_tools)

CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
       "img-src data:")

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:0 16px 40px;
color:#1d232a;background:#fff}
h1{font-size:22px;margin:16px 0 8px}h2{border-bottom:1px solid #ccd;margin-top:28px}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #dde;padding:2px 8px;
text-align:left;vertical-align:top}th{background:#f3f4f8}
td:not(:first-child){font-variant-numeric:tabular-nums}
details.item{border:1px solid #dde;border-radius:4px;margin:4px 0;padding:2px 8px}
details.item>summary{cursor:pointer}details[open].item{background:#fafbfd}
pre.text{white-space:pre-wrap;word-break:break-word;background:#f6f6f4;padding:6px;
margin:4px 0;max-height:24em;overflow:auto;font-size:12px}
.cut{color:#8a5a00;font-size:12px}.empty{color:#667}.error{color:#b00020}
.role{font-weight:600;margin-right:6px}.kind{color:#445;font-style:italic}
.size{color:#778;font-size:12px}
.message{border-left:3px solid #ccd;padding-left:8px;margin:6px 0}
.diff{font-family:monospace;background:#eef;padding:0 4px}.staged{color:#8a2be2}
.key{border-left:14px solid;padding-left:4px;margin-right:10px}
#search{position:sticky;top:0;background:#fff;padding:8px 0;border-bottom:1px solid #eee;z-index:1}
#search input{font-size:15px;width:40em;max-width:80%}#count{margin-left:10px;color:#445}
svg.timeline,svg.whatif{width:100%;height:auto;border:1px solid #eee}
.note{font-style:italic}
svg .axis{stroke:#99a}svg .tick,svg .threshold-label{font-size:11px;fill:#556}
svg .threshold{stroke:#b00020;stroke-dasharray:6 4}svg .series{fill:none;stroke-width:2}
svg .mark{stroke-width:1;opacity:.45}svg .cache{opacity:.18;stroke:none}
[hidden]{display:none!important}
"""

SCRIPT = """
(function(){
  var box=document.getElementById('q'),count=document.getElementById('count');
  var items=Array.prototype.slice.call(document.querySelectorAll('details.item'));
  var texts=items.map(function(el){return el.textContent.toLowerCase();});
  function run(){
    var q=box.value.trim().toLowerCase(),n=0;
    items.forEach(function(el,i){
      var hit=!q||texts[i].indexOf(q)>=0;
      el.hidden=!hit;
      if(q&&hit){el.open=true;n++;}
    });
    count.textContent=q?(n+(n===1?' match':' matches')):'';
  }
  box.addEventListener('input',run);
})();
"""


def render(report: Report) -> str:
    """The whole page."""
    body = "".join(section(report) for section in SECTIONS)
    what_if = '<a href="#whatif">what if</a> · ' if report.whatif is not None else ""
    search = ('<div id="search"><input id="q" type="search" placeholder="search requests, '
              'stages, tool results…" aria-label="search"><span id="count"></span>'
              f'<nav> <a href="#timeline">timeline</a> · {what_if}'
              '<a href="#requests">requests</a> · '
              '<a href="#stages">stages</a> · <a href="#system">system prompt and tools</a>'
              "</nav></div>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f'<meta name="generator" content="{GENERATOR}">'
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>ctxlab report</title><style>{STYLE}</style></head><body>"
            f"{search}{body}<script>{SCRIPT}</script></body></html>\n")
