"""The explorer's drawing in Debian's chromium: how long the timeline layout (a chat just opened,
auto-collapse included), fitting labels after a zoom, and unfolding a rollup take in the page, on
synthetic chats up to the explorer's 1,500-node drawing limit. Prints a rich table.

    .venv/bin/python bench/explorer_layout.py [--sizes 150,500,1500] [--runs 3]

Needs the vendored scripts (`make vendor`) and /usr/bin/chromium; no server (the page's layout
module runs on a blank page with the same scripts the explorer loads).
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from playwright.sync_api import sync_playwright
from rich.console import Console
from rich.table import Table

STATIC = Path(__file__).resolve().parent.parent / "memgraph_plugin" / "web" / "static"
SCRIPTS = [
    "vendor/cytoscape.min.js", "vendor/layout-base.js", "vendor/cose-base.js",
    "vendor/cytoscape-fcose.js", "explorer-layout.js",
]  # fmt: skip
FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]

#: A chat of about `size` drawn nodes: events (3 in 4), rollups of 3 over them up to the top,
#: people (1 in 10 events) linked with 4 events each. Returns timings in ms.
MEASURE = """(size) => {
  const cy = cytoscape({ container: document.getElementById('graph'),
    style: explorerLayout.style() });
  explorerLayout.setTypes({ event: { colour: '#4e79a7', timeline: true },
    character_sheet: { colour: '#f28e2b', timeline: false } });
  const events = Math.round(size * 0.6), people = Math.max(1, Math.round(events / 10));
  const node = (id, type, seq, depth, rollup) => ({ group: 'nodes', classes: rollup ? 'rollup' : '',
    data: { id, type, seq, depth, rollup, short: `${type} ${id}`, label: `${type} ${id}`,
            colour: '#888' } });
  const els = [];
  let level = [];
  for (let i = 0; i < events; i++) { els.push(node('e' + i, 'event', i, 0, false)); level.push(i); }
  let depth = 1, k = 0, ids = level.map((i) => 'e' + i), seqs = level;
  while (ids.length > 3) {
    const nextIds = [], nextSeqs = [];
    for (let j = 0; j + 3 <= ids.length; j += 3) {
      const id = 'r' + (k++);
      els.push(node(id, 'event', seqs[j + 2], depth, true));
      for (const c of ids.slice(j, j + 3)) {
        els.push({ group: 'edges', data: { id: `${id}>${c}`, source: id, target: c,
          type: 'semantic_contains' } });
      }
      nextIds.push(id); nextSeqs.push(seqs[j + 2]);
    }
    ids = nextIds; seqs = nextSeqs; depth++;
  }
  for (let i = 0; i < people; i++) {
    els.push(node('c' + i, 'character_sheet', null, 0, false));
    for (let j = 0; j < 4; j++) {
      const e = 'e' + ((i * 7 + j * 131) % events);
      els.push({ group: 'edges', data: { id: `c${i}-${e}`, source: e, target: 'c' + i,
        type: 'involved_in' } });
    }
  }
  cy.add(els);
  const time = (f) => { const t = performance.now(); f(); return performance.now() - t; };
  const open = time(() => explorerLayout.arrange(cy, { fit: true, fresh: true }));
  const zoom = time(() => { cy.zoom(cy.zoom() * 2); explorerLayout.fitLabels(cy); });
  const newest = cy.nodes('.collapsed').sort((a, b) => a.data('seq') - b.data('seq')).last();
  const fold = time(() => {
    if (!explorerLayout.toggle(cy, newest.id())) throw new Error('nothing to unfold');
  });
  const out = { nodes: cy.nodes().length, shown: cy.nodes(':visible').length, open, zoom, fold };
  cy.destroy();
  return out;
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="150,500,1500")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    table = Table(title="explorer drawing in chromium (median ms of runs)")
    for column in ("drawn nodes", "shown after auto-collapse", "open (layout + fit)",
                   "zoom x2 + labels", "unfold a rollup"):  # fmt: skip
        table.add_column(column, justify="right")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 850})
        page.set_content('<div id="graph" style="width:1000px;height:780px"></div>')
        for script in SCRIPTS:
            page.add_script_tag(path=str(STATIC / script))
        for size in (int(s) for s in args.sizes.split(",")):
            runs = [page.evaluate(MEASURE, size) for _ in range(args.runs)]
            med = {k: statistics.median(r[k] for r in runs) for k in ("open", "zoom", "fold")}
            table.add_row(
                str(runs[0]["nodes"]), str(runs[0]["shown"]),
                f"{med['open']:.0f}", f"{med['zoom']:.0f}", f"{med['fold']:.0f}",
            )  # fmt: skip
        browser.close()
    Console().print(table)


if __name__ == "__main__":
    main()
