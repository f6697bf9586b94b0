// Drives an exported page in jsdom (a real DOM implementation; no layout, so scrolling is a
// no-op): runs its script, then clicks tree rows and types searches as a reader would, and prints
// what the page shows after each step as JSON.
// Usage: node viewer_harness.cjs JSDOM_DIR PAGE.html '[{"click": ID} | {"search": TEXT}, ...]'
"use strict";
const fs = require("fs");
const { JSDOM } = require(process.argv[2]);
const html = fs.readFileSync(process.argv[3], "utf8");
const actions = JSON.parse(process.argv[4]);

const dom = new JSDOM(html, {
  runScripts: "dangerously",
  beforeParse(window) {
    window.alerts = 0;
    window.alert = () => { window.alerts += 1; };
    window.HTMLElement.prototype.scrollIntoView = function () { window.scrolledTo = this.dataset.id; };
  },
});
const { window } = dom;
const doc = window.document;

function state() {
  return {
    visible: [...doc.querySelectorAll("main section.entry")].filter((s) => !s.hidden).map((s) => s.dataset.id),
    onpath: [...doc.querySelectorAll("nav li.row.onpath")].map((r) => r.dataset.id),
    selected: [...doc.querySelectorAll("nav li.row.selected")].map((r) => r.dataset.id),
    openBranches: [...doc.querySelectorAll("nav details")].filter((d) => d.open).length,
    marks: [...doc.querySelectorAll("main mark")].map((m) => m.textContent),
    matches: [...doc.querySelectorAll("main section.match")].map((s) => s.dataset.id),
    count: doc.getElementById("count").textContent,
    scrolledTo: window.scrolledTo || null,
    alerts: window.alerts,
    text: doc.querySelector("main").textContent.length,
  };
}

(async () => {
  const out = [state()];
  for (const action of actions) {
    if (action.click !== undefined) {
      const link = doc.querySelector(`nav li.row[data-id="${action.click}"] a`);
      link.dispatchEvent(new window.MouseEvent("click", { bubbles: true, cancelable: true }));
    }
    if (action.search !== undefined) {
      const box = doc.getElementById("search");
      box.value = action.search;
      box.dispatchEvent(new window.Event("input", { bubbles: true }));
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    out.push(state());
  }
  process.stdout.write(JSON.stringify(out));
  window.close();
})();
