// Vendor: statistics, top entities, and the graph drawn in the browser
// (Cytoscape.js): the capped graph of find_vendor_info (full mode) first, the
// whole graph (explorer view vendor_graph) on request; a click on an entity adds
// its neighbours (get_entity_neighbors) and lists its mentions and evidence
// (explorer view entity_evidence); a path between two entities (find_entity_path)
// is highlighted. Performance marks: graph-drawn, expand-drawn (bench.explorer).
import { el, fill, header, tool, view, errorBox, params, highlighted, n } from "/static/js/common.js";

const COLOURS = {
  ORG: "#1f6feb", PERSON: "#cf222e", PRODUCT: "#2da44e", LOCATION: "#8250df", EVENT: "#e16f24",
  GPE: "#8250df", NORP: "#bf8700", FAC: "#0a7d8c", WORK_OF_ART: "#bc4c00", LAW: "#57606a",
};
const colour = (type) => COLOURS[type] || "#6e7781";
const WEAK = "MENTIONED_WITH";
// a bigger graph is laid out on a grid first: a force layout over thousands of
// entities would keep the page busy for many seconds
const FORCE_LAYOUT_MAX = 400;

const main = document.getElementById("main");
await header("/vendor");
const name = params.get("name");
if (!name) {
  fill(main, el("h1", {}, "Vendor"), el("div", { class: "empty" }, "No vendor given: choose one on ", el("a", { href: "/" }, "the vendors page"), "."));
  document.body.dataset.ready = "1";
  throw new Error("no vendor");
}

const title = el("h1", {}, name);
const stats = el("div", { class: "stats", id: "stats" });
const notice = el("div", { class: "notice", id: "graph-notice", role: "status" });
const weakToggle = el("input", { type: "checkbox", id: "show-weak" });
const labelsToggle = el("input", { type: "checkbox", id: "show-labels", checked: true });
const graphBox = el("div", { id: "graph", role: "img", "aria-label": `Knowledge graph of ${name}` });
const legend = el("div", { class: "legend", id: "legend" });
const panel = el("section", { class: "panel", id: "entity-panel", "aria-live": "polite", tabindex: "-1" },
  el("h2", {}, "Entity"), el("p", { class: "muted" }, "Click an entity in the graph, or choose one in the list, to see its neighbours, where the notes mention it and the sentences its relationships come from."));
const top = el("ol", { id: "top-entities" });
const fromInput = el("input", { id: "path-from", list: "entity-names", placeholder: "from entity", "aria-label": "Path from entity" });
const toInput = el("input", { id: "path-to", list: "entity-names", placeholder: "to entity", "aria-label": "Path to entity" });
const pathResult = el("div", { id: "path-result", role: "status" });
const names = el("datalist", { id: "entity-names" });

fill(main,
  title,
  el("p", { class: "muted" }, el("a", { href: `/lifecycle?vendor=${encodeURIComponent(name)}` }, "Release cycles of this vendor"), " · ",
    el("a", { href: `/search?q=${encodeURIComponent(name)}` }, "Search its notes")),
  stats,
  el("div", { class: "grid" },
    el("div", {},
      notice,
      el("div", { class: "toolbar" },
        el("label", {}, weakToggle, " Show MENTIONED_WITH (weak co-occurrence)"),
        el("label", {}, labelsToggle, " Edge labels"),
        el("button", { type: "button", id: "fit", onclick: () => cy && cy.fit(undefined, 20) }, "Fit")),
      graphBox,
      legend,
      el("form", { class: "toolbar", id: "path-form", onsubmit: (e) => { e.preventDefault(); findPath(); } },
        el("strong", {}, "Path"), fromInput, toInput, el("button", { type: "submit" }, "Find path"), names),
      pathResult),
    el("div", {}, panel, el("section", { class: "panel" }, el("h2", {}, "Top entities"), top))),
);

let cy = null;
let vendorName = name;

function nodeData(e) {
  return {
    group: "nodes",
    data: { id: String(e.entity_id), label: e.name, type: e.entity_type, size: 14 + 6 * Math.log2(1 + (e.mention_count || 1)), colour: colour(e.entity_type) },
  };
}

function edgeData(r) {
  const type = r.relationship_type;
  return {
    group: "edges",
    data: { id: "r" + r.relationship_id, source: String(r.source_id), target: String(r.target_id), type, label: type === WEAK ? "" : type, evidence: (r.metadata || {}).evidence || "" },
    classes: type === WEAK ? "weak" : "",
  };
}

function style(big) {
  // a big graph names only its larger entities, the chosen ones and their new
  // neighbours: drawing a thousand labels made every redraw (an expand) slow
  const quiet = big ? [
    { selector: "node", style: { label: "" } },
    { selector: "node.named, node:selected, node.path", style: { label: "data(label)" } },
  ] : [];
  return [
    { selector: "node", style: { "background-color": "data(colour)", label: "data(label)", width: "data(size)", height: "data(size)", "font-size": 10, "text-valign": "bottom", "text-margin-y": 2, "min-zoomed-font-size": 7, color: "#1d2430" } },
    { selector: "edge", style: { width: 1.4, "line-color": "#8c959f", "target-arrow-color": "#8c959f", "target-arrow-shape": "triangle", "arrow-scale": 0.7, "curve-style": "bezier", label: "data(label)", "font-size": 8, "text-rotation": "autorotate", "min-zoomed-font-size": 8, color: "#57606a" } },
    { selector: "edge.weak", style: { opacity: 0.18, "target-arrow-shape": "none", width: 1 } },
    { selector: "edge.hidden-weak", style: { display: "none" } },
    { selector: ".no-labels", style: { label: "" } },
    { selector: "node:selected", style: { "border-width": 3, "border-color": "#f5a623" } },
    { selector: ".path", style: { "line-color": "#f5a623", "target-arrow-color": "#f5a623", width: 4, "border-width": 4, "border-color": "#f5a623", opacity: 1, "z-index": 10 } },
    { selector: ".faded", style: { opacity: 0.12 } },
    ...quiet,
  ];
}

const NAMED_IN_BIG = 60;

function applyToggles() {
  if (!cy) return;
  cy.batch(() => {
    cy.edges(".weak").toggleClass("hidden-weak", !weakToggle.checked);
    cy.edges().toggleClass("no-labels", !labelsToggle.checked);
  });
}
weakToggle.addEventListener("change", applyToggles);
labelsToggle.addEventListener("change", applyToggles);

function draw(entities, relationships, mark) {
  const started = performance.now();
  const elements = [...entities.map(nodeData), ...relationships.map(edgeData)];
  const big = entities.length > FORCE_LAYOUT_MAX;
  if (cy) cy.destroy();
  cy = cytoscape({
    container: graphBox,
    elements,
    style: style(big),
    layout: { name: "preset" },
    textureOnViewport: big,
    hideEdgesOnViewport: big,
    pixelRatio: 1,
  });
  if (big) {
    labelsToggle.checked = false;
    cy.nodes().sort((a, b) => b.data("size") - a.data("size")).slice(0, NAMED_IN_BIG).addClass("named");
  }
  applyToggles();
  const layout = cy.layout(big
    ? { name: "grid", avoidOverlap: false, condense: true, animate: false }
    : { name: "cose", animate: false, randomize: true, numIter: 600, nodeRepulsion: () => 9000, idealEdgeLength: () => 70, padding: 20 });
  layout.one("layoutstop", () => {
    cy.fit(undefined, 20);
    requestAnimationFrame(() => {
      performance.mark(mark);
      graphBox.dataset.drawn = String(cy.nodes().length);
      graphBox.dataset.mark = mark;
      graphBox.dataset.drawMs = String(Math.round(performance.now() - started));
    });
  });
  layout.run();
  cy.on("tap", "node", (evt) => select(evt.target.id(), true));
  cy.on("tap", "edge", (evt) => showEdge(evt.target));
  fill(names, cy.nodes().map((node) => el("option", { value: node.data("label") })));
  fill(legend, [...new Set(entities.map((e) => e.entity_type))].sort().map((t) => el("span", {}, el("span", { class: "swatch", "data-colour": t }), t)));
  for (const swatch of legend.querySelectorAll(".swatch")) swatch.style.backgroundColor = colour(swatch.dataset.colour);
}

function showEdge(edge) {
  const d = edge.data();
  const source = cy.getElementById(d.source).data("label");
  const target = cy.getElementById(d.target).data("label");
  fill(panel, el("h2", {}, "Relationship"), el("p", {}, `${source} —${d.type}→ ${target}`),
    d.evidence ? el("blockquote", { class: "sentence" }, d.evidence) : el("p", { class: "muted" }, "Open either entity to see the sentences its relationships come from."));
}

async function select(entityId, fromGraph) {
  performance.mark("expand-start");
  const node = cy.getElementById(entityId);
  // selected once the answers are in: selecting first made the page redraw the whole
  // graph while the answers waited for the main thread
  const [hood, evidence] = await Promise.all([
    tool("get_entity_neighbors", { vendor_name: vendorName, entity: entityId, depth: 1, limit: 50 }),
    view("entity_evidence", { vendor_name: vendorName, entity: entityId, limit: 20 }),
  ]);
  performance.mark("expand-answered");
  cy.$(":selected").unselect();
  node.select();
  if (hood.status === 200) {
    const r = hood.env.results;
    const centre = node.nonempty() ? node.position() : { x: 0, y: 0 };
    const fresh = r.neighbors.filter((e) => cy.getElementById(String(e.entity_id)).empty());
    cy.batch(() => {
      fresh.forEach((e, i) => {
        const angle = (2 * Math.PI * i) / Math.max(1, fresh.length);
        const added = cy.add(nodeData(e));
        added.position({ x: centre.x + 120 * Math.cos(angle), y: centre.y + 120 * Math.sin(angle) });
      });
      const edges = [];
      for (const rel of r.relationships) {
        if (cy.getElementById("r" + rel.relationship_id).empty() && cy.getElementById(String(rel.source_id)).nonempty() && cy.getElementById(String(rel.target_id)).nonempty()) edges.push(cy.add(edgeData(rel)));
      }
      r.neighbors.forEach((e) => cy.getElementById(String(e.entity_id)).addClass("named"));
      // the toggles, for the new edges only: a whole graph's edges stay as they are
      for (const edge of edges) {
        edge.toggleClass("hidden-weak", edge.hasClass("weak") && !weakToggle.checked);
        edge.toggleClass("no-labels", !labelsToggle.checked);
      }
    });
    requestAnimationFrame(() => {
      performance.mark("expand-drawn");
      performance.measure("expand", "expand-start", "expand-drawn");
      graphBox.dataset.expanded = String(fresh.length);
    });
  }
  showEvidence(evidence, hood);
  if (!fromGraph) panel.focus();
}

function noteLink(chunkId, label) {
  return el("a", { href: `/note?chunk=${chunkId}#c-${chunkId}` }, label);
}

function showEvidence(evidence, hood) {
  if (evidence.status !== 200) { fill(panel, el("h2", {}, "Entity"), errorBox(evidence.env, evidence.status)); return; }
  const r = evidence.env.results;
  const e = r.entity;
  const added = hood.status === 200 ? hood.env.results.neighbors.length : 0;
  fill(panel,
    el("h2", { id: "entity-name" }, e.name),
    el("p", { class: "muted" }, `${e.entity_type} · ${n(e.mention_count)} mentions · ${added} neighbours shown`),
    e.snippet ? el("p", {}, e.snippet) : null,
    el("h3", {}, `Mentions (${r.mentions.length} of ${n(r.total_mentions)})`),
    el("ul", { class: "plain", id: "mentions" }, r.mentions.map((m) => el("li", {},
      el("p", { class: "sentence" }, highlighted(m.sentence, [m.mention])),
      el("div", { class: "where" }, noteLink(m.chunk_id, m.section || m.title), ` · ${m.source_path}`)))),
    el("h3", {}, `Relationships (${r.relationships.length} of ${n(r.total_relationships)})`),
    el("ul", { class: "plain", id: "evidence" }, r.relationships.map((rel) => el("li", {},
      el("div", {}, `${rel.source_name} —${rel.type}→ ${rel.target_name}`, el("span", { class: "muted" }, ` (${rel.confidence})`)),
      rel.sentence ? el("p", { class: "sentence" }, "“", rel.sentence, "”") : null,
      rel.evidence_chunk_id ? el("div", { class: "where" }, noteLink(rel.evidence_chunk_id, "the note")) : null))),
  );
}

async function findPath() {
  const from = fromInput.value.trim();
  const to = toInput.value.trim();
  if (!from || !to) { fill(pathResult, el("p", { class: "hint" }, "Give two entities (names or ids).")); return; }
  const { status, env } = await tool("find_entity_path", { vendor_name: vendorName, from_entity: from, to_entity: to });
  cy.elements().removeClass("path faded");
  if (status !== 200) { fill(pathResult, errorBox(env, status)); return; }
  const r = env.results;
  if (!r.path_exists) { fill(pathResult, el("p", { id: "no-path" }, r.reason || "No path between them.")); return; }
  let previous = null;
  const steps = [];
  cy.batch(() => {
    for (const step of r.path) {
      let node = cy.getElementById(String(step.entity_id));
      if (node.empty()) node = cy.add(nodeData({ ...step, mention_count: 1 }));
      node.addClass("path");
      if (previous) {
        const forward = previous.direction !== "backward";
        const [s, t] = forward ? [previous.entity_id, step.entity_id] : [step.entity_id, previous.entity_id];
        const edges = cy.edges(`[source = "${s}"][target = "${t}"][type = "${previous.relationship_to_next}"]`);
        if (edges.nonempty()) edges.addClass("path");
        else cy.add({ group: "edges", data: { id: `p${s}-${t}`, source: String(s), target: String(t), type: previous.relationship_to_next, label: previous.relationship_to_next }, classes: "path" });
      }
      previous = step;
      const rel = step.relationship_to_next;
      steps.push(step.name, rel ? (step.direction === "backward" ? ` ←${rel}— ` : ` —${rel}→ `) : "");
    }
    cy.elements().not(".path").addClass("faded");
  });
  fill(pathResult, el("p", { id: "path-steps" }, `${r.hops} hops: `, ...steps), el("button", { type: "button", onclick: () => { cy.elements().removeClass("path faded"); fill(pathResult); } }, "Clear path"));
}

async function loadWhole(total) {
  performance.mark("whole-requested");
  fill(notice, `Loading all ${n(total)} entities…`);
  const { status, env } = await view("vendor_graph", { vendor_name: vendorName });
  if (status !== 200) { fill(notice, errorBox(env, status)); return; }
  const r = env.results;
  draw(r.entities, r.relationships, "whole-graph-drawn");
  fill(notice, el("span", { id: "graph-count" }, `Showing all ${n(r.total_entities)} entities and ${n(r.total_relationships)} relationships.`));
}

const { status, env } = await tool("find_vendor_info", { vendor_name: name, response_mode: "full" });
if (status !== 200) {
  const code = (env.error || {}).code;
  const box = errorBox(env, status);
  const suggestions = ((env.error || {}).details || {}).suggestions || [];
  fill(main, title, box, suggestions.length ? el("p", {}, code === "VENDOR_AMBIGUOUS" ? "Which one? " : "Did you mean ",
    suggestions.map((s, i) => [i ? ", " : "", el("a", { href: `/vendor?name=${encodeURIComponent(s)}` }, s)])) : null);
  document.body.dataset.ready = "1";
  throw new Error(code);
}
const r = env.results;
vendorName = r.vendor_name;
fill(title, r.vendor_name);
document.title = `${r.vendor_name} · Vendor knowledge`;
const s = r.statistics;
fill(stats, [
  ["Entities", s.entity_count], ["Relationships", s.relationship_count], ["Typed relationships", s.relationship_count - ((s.relationship_type_distribution || {})[WEAK] || 0)],
  ["Components", s.connected_components], ["Release cycles", (r.lifecycle || {}).cycle_count],
].map(([label, value]) => el("div", {}, el("strong", {}, n(value)), label)));
const entities = r.entities || [];
const relationships = r.relationships || [];
fill(top, [...entities].sort((a, b) => b.importance - a.importance).slice(0, 15).map((e) =>
  el("li", {}, el("button", { type: "button", class: "entity-button", "data-entity": e.entity_id, onclick: () => select(String(e.entity_id), false) }, e.name), el("span", { class: "muted" }, ` ${e.entity_type}`))));
if (!entities.length) {
  fill(notice, el("span", { class: "empty" }, "This vendor's notes gave no entities yet."));
} else {
  draw(entities, relationships, "graph-drawn");
  // the budget drops release cycles first: only graph items left out cut the drawing
  const cut = (r.entities_left_out || 0) + (r.relationships_left_out || 0) > 0;
  const parts = [el("span", { id: "graph-count" }, `Showing ${n(entities.length)} of ${n(r.total_entities)} entities and ${n(relationships.length)} of ${n(r.total_relationships)} relationships`),
    r.truncated ? " (the most important ones)" : "", cut ? "; the answer was cut to the server's token budget" : "", ". "];
  if (r.truncated || cut) parts.push(el("button", { type: "button", id: "show-all", onclick: () => loadWhole(r.total_entities) }, `Show all ${n(r.total_entities)} entities`));
  fill(notice, parts);
}
document.body.dataset.ready = "1";
