// The table's log ("What happened"): numbered lines, the latest last. Only the last
// LOG_KEPT lines are kept in the page (older ones are dropped, not redrawn: a long
// match would otherwise hold thousands of nodes), and they are kept in sessionStorage
// so a refresh shows them again.

import { h, readJson } from "./dom.js";

export const LOG_KEPT = 150;

export class TableLog {
  constructor(gameId) {
    this.key = `glintwick.log.${gameId}`;
    const kept = readJson(sessionStorage, this.key, { count: 0, lines: [] });
    this.count = kept.count; // lines ever written (the next line's number is count + 1)
    this.lines = kept.lines; // the last LOG_KEPT: [number, text]
    this.list = h("ol", { class: "log-lines", tabindex: "0", "aria-label": "The latest moves, the latest last" });
    this.list.append(...this.lines.map(([n, text]) => this.item(n, text)));
    this.dirty = false;
  }

  item(n, text) {
    return h("li", { "data-n": n }, h("span", { class: "n", "aria-hidden": "true" }, `${n}.`), " ", text);
  }

  add(text) {
    this.count += 1;
    this.lines.push([this.count, text]);
    this.list.append(this.item(this.count, text));
    while (this.lines.length > LOG_KEPT) { this.lines.shift(); this.list.firstElementChild.remove(); }
    this.dirty = true;
  }

  // after a batch of lines: store them and show the latest
  flush() {
    if (!this.dirty) return;
    this.dirty = false;
    try { sessionStorage.setItem(this.key, JSON.stringify({ count: this.count, lines: this.lines })); } catch { /* full: not kept */ }
    this.list.scrollTop = this.list.scrollHeight;
  }

  panel() {
    return h("section", { class: "log", "aria-labelledby": "log-title" },
      h("h2", { id: "log-title" }, "What happened"), this.list);
  }
}
