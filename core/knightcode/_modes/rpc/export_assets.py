"""The exported page's stylesheet and script, inlined into every page (no network, no CDN).

The script never reads session data as code or markup: the page's HTML already holds every
entry (rendered and escaped in Python), and the script only shows and hides sections, walks the
tree rows' ``data-id``/``data-parent`` attributes, and wraps search matches in ``<mark>`` by
splitting text nodes. The page's Content-Security-Policy allows this one script by its hash, so
even markup that slipped through could not run.
"""

from __future__ import annotations

import base64
import hashlib

__all__ = ["SCRIPT", "STYLE", "script_hash"]

STYLE = """
:root{--fg:#1d1d1f;--muted:#666;--line:#e3e3e3;--bg:#fafafa;--card:#fff}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:var(--fg);background:var(--bg)}
header{position:sticky;top:0;z-index:2;background:var(--bg);border-bottom:1px solid var(--line);
padding:.6rem 1rem;display:flex;gap:1rem;align-items:baseline;flex-wrap:wrap}
h1{font-size:1.2rem;margin:0}.meta{color:var(--muted);font-size:.8rem}
#search{margin-left:auto;padding:.3rem .5rem;width:18rem;font:inherit}
#count{color:var(--muted);font-size:.8rem;min-width:6rem}
.layout{display:flex;align-items:flex-start}
nav{position:sticky;top:3.2rem;width:22rem;flex:none;max-height:calc(100vh - 3.4rem);
overflow:auto;font-size:.8rem;padding:.5rem;border-right:1px solid var(--line)}
nav ul,nav ol{list-style:none;margin:0;padding:0}nav ul.branches ul.branches{padding-left:.8rem}
nav summary{color:var(--muted);cursor:pointer}.row .k{font-weight:600}
.row a{display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;color:var(--fg);
text-decoration:none;padding:0 .3rem;border-left:2px solid transparent;opacity:.6}
.row.onpath a{opacity:1;border-left-color:#2f6fde}.row.leaf a{font-weight:600}
.row.selected a{background:#dfe8fb}
main{flex:1;min-width:0;max-width:60rem;padding:0 1rem 3rem}
.entry{border-radius:8px;padding:.6rem .9rem;margin:.8rem 0;background:var(--card);
border:1px solid var(--line);border-left-width:4px}
.entry.match{outline:2px solid #f0c000}
.role{font-size:.75rem;font-weight:600;text-transform:uppercase;letter-spacing:.05em;
color:var(--muted)}
.user{border-left-color:#2f6fde}.assistant{border-left-color:#2a9d55}
.toolResult{border-left-color:#a0a0a0}.bashExecution{border-left-color:#b7791f}
.compaction{border-left-color:#8a5cd6}.branchSummary{border-left-color:#c05cd6}
.custom{border-left-color:#d65c8a}.change{border-left-color:#ccc;padding:.2rem .9rem}
.error{border-left-color:#d33}
.call{border:1px dashed var(--line);border-radius:6px;padding:.3rem .6rem;margin:.4rem 0}
.call .id{font-weight:400;text-transform:none}
.thinking{color:#555;font-style:italic}.path{font:13px ui-monospace,monospace;margin:.2rem 0}
.note{color:#777;font-size:.8rem;margin:.3rem 0}
pre{white-space:pre-wrap;word-break:break-word;margin:.3rem 0;font:13px/1.45 ui-monospace,monospace}
pre.hl{background:#f6f8fa;padding:.4rem .6rem;border-radius:4px}
.text{font:inherit}details{margin:.3rem 0}summary{cursor:pointer;color:#555}
.md p{margin:.4rem 0}.md table{border-collapse:collapse}.md td,.md th{border:1px solid var(--line);
padding:.2rem .4rem}
img{max-width:100%}mark{background:#ffe066;color:inherit}
@media (max-width:50rem){nav{display:none}}
"""

SCRIPT = r"""
(function () {
  "use strict";
  var rows = new Map();
  var kids = new Map();
  document.querySelectorAll("nav li.row").forEach(function (row) {
    var id = row.dataset.id;
    var parent = row.dataset.parent || "";
    rows.set(id, row);
    if (!kids.has(parent)) kids.set(parent, []);
    kids.get(parent).push(id);
  });
  var sections = Array.prototype.slice.call(document.querySelectorAll("main section.entry"));
  var byId = new Map();
  sections.forEach(function (section) { byId.set(section.dataset.id, section); });
  var shown = new Set();
  document.querySelectorAll("nav li.row.onpath").forEach(function (row) {
    shown.add(row.dataset.id);
  });

  function pathThrough(id) {
    var ids = [];
    var seen = new Set();
    var current = id;
    while (current && rows.has(current) && !seen.has(current)) {
      seen.add(current);
      ids.push(current);
      current = rows.get(current).dataset.parent;
    }
    ids.reverse();
    current = id;
    while (kids.has(current)) {
      var children = kids.get(current);
      current = children[children.length - 1];
      if (seen.has(current)) break;
      seen.add(current);
      ids.push(current);
    }
    return new Set(ids);
  }

  function showBranch(id) {
    shown = pathThrough(id);
    sections.forEach(function (section) { section.hidden = !shown.has(section.dataset.id); });
    rows.forEach(function (row, rowId) {
      row.classList.toggle("onpath", shown.has(rowId));
      row.classList.toggle("selected", rowId === id);
    });
    var row = rows.get(id);
    for (var node = row; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
  }

  function nearestSection(id) {
    for (var current = id; current && rows.has(current); ) {
      if (byId.has(current)) return byId.get(current);
      current = rows.get(current).dataset.parent;
    }
    return null;
  }

  document.querySelector("nav").addEventListener("click", function (event) {
    var link = event.target.closest("li.row a");
    if (!link) return;
    event.preventDefault();
    var id = link.parentElement.dataset.id;
    clearSearch();
    showBranch(id);
    var target = nearestSection(id);
    if (target) target.scrollIntoView({ block: "start" });
  });

  var search = document.getElementById("search");
  var count = document.getElementById("count");
  var texts = null;
  var timer = 0;

  function unmark() {
    document.querySelectorAll("main mark").forEach(function (mark) {
      var parent = mark.parentNode;
      parent.replaceChild(document.createTextNode(mark.textContent), mark);
      parent.normalize();
    });
  }

  function mark(section, query) {
    var walker = document.createTreeWalker(section, NodeFilter.SHOW_TEXT);
    var found = [];
    for (var node = walker.nextNode(); node; node = walker.nextNode()) found.push(node);
    found.forEach(function (text) {
      var value = text.nodeValue;
      var lower = value.toLowerCase();
      var at = lower.indexOf(query);
      if (at < 0) return;
      var fragment = document.createDocumentFragment();
      var from = 0;
      while (at >= 0) {
        fragment.appendChild(document.createTextNode(value.slice(from, at)));
        var hit = document.createElement("mark");
        hit.textContent = value.slice(at, at + query.length);
        fragment.appendChild(hit);
        from = at + query.length;
        at = lower.indexOf(query, from);
      }
      fragment.appendChild(document.createTextNode(value.slice(from)));
      text.parentNode.replaceChild(fragment, text);
    });
  }

  function clearSearch() {
    if (!search.value) return;
    search.value = "";
    unmark();
    sections.forEach(function (section) { section.classList.remove("match"); });
    count.textContent = "";
  }

  function runSearch() {
    var query = search.value.trim().toLowerCase();
    unmark();
    if (!query) {
      count.textContent = "";
      sections.forEach(function (section) {
        section.classList.remove("match");
        section.hidden = !shown.has(section.dataset.id);
      });
      return;
    }
    if (texts === null) {
      texts = sections.map(function (section) { return section.textContent.toLowerCase(); });
    }
    var matches = 0;
    sections.forEach(function (section, index) {
      var hit = texts[index].indexOf(query) >= 0;
      section.hidden = !hit;
      section.classList.toggle("match", hit);
      if (hit) {
        matches += 1;
        if (matches <= 200) {
          section.querySelectorAll("details").forEach(function (d) { d.open = true; });
          mark(section, query);
        }
      }
    });
    count.textContent = matches + (matches === 1 ? " match" : " matches") + " (all branches)";
  }

  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(runSearch, 150);
  });
})();
"""


def script_hash() -> str:
    """The CSP source allowing exactly :data:`SCRIPT` (``'sha256-…'``)."""
    digest = hashlib.sha256(SCRIPT.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"
