// Search: semantic_search with the tool's own options (response mode, page size),
// the query's words marked in each hit, each hit linked to its note and vendor.
import { el, fill, header, tool, errorBox, params, highlighted, n } from "/static/js/common.js";

const main = document.getElementById("main");
await header("/search");

const query = el("input", { type: "search", id: "query", value: params.get("q") || "", placeholder: "what to look for, e.g. iOS 17 end of support", "aria-label": "Query", maxlength: "500", size: "48" });
const mode = el("select", { id: "mode", "aria-label": "Response mode" },
  ["preview", "metadata", "full"].map((m) => el("option", { value: m, selected: m === (params.get("mode") || "preview") }, m)));
const size = el("select", { id: "page-size", "aria-label": "Results per page" },
  ["10", "20", "50"].map((s) => el("option", { value: s, selected: s === (params.get("size") || "10") }, s)));
const results = el("div", { id: "results", "aria-live": "polite" });
const more = el("div", { id: "more" });

fill(main,
  el("h1", {}, "Search"),
  el("form", { class: "toolbar", role: "search", onsubmit: (e) => { e.preventDefault(); run(null); } },
    query, el("label", {}, "Mode ", mode), el("label", {}, "Per page ", size), el("button", { type: "submit" }, "Search")),
  el("p", { class: "hint" }, "Hybrid search (meaning and keywords). \"Quoted phrases\" and -word narrow the keyword side."),
  results, more);

function words() {
  return query.value.replace(/["-]/g, " ").split(/\s+/).filter(Boolean);
}

function hit(h) {
  const text = h.chunk_text || h.chunk_snippet || "";
  const noteHref = `/note?chunk=${h.chunk_id}#c-${h.chunk_id}`;
  return el("article", { class: "hit", "data-chunk": h.chunk_id },
    el("h3", {}, `${h.rank}. `, el("a", { href: noteHref, class: "note-link" }, h.context_header || h.source_file || `chunk ${h.chunk_id}`)),
    el("div", { class: "where" },
      h.vendor ? el("a", { href: `/vendor?name=${encodeURIComponent(h.vendor)}`, class: "vendor-link" }, h.vendor) : null,
      h.source_file ? ` · ${h.source_file}` : "", ` · score ${h.hybrid_score}`),
    text ? el("p", { class: "sentence" }, highlighted(text, words())) : null);
}

async function run(cursor) {
  const q = query.value.trim();
  if (!q) { fill(results, el("p", { class: "empty" }, "Type what to look for.")); fill(more); return; }
  const state = new URLSearchParams({ q });
  if (mode.value !== "preview") state.set("mode", mode.value);
  if (size.value !== "10") state.set("size", size.value);
  history.replaceState(null, "", `/search?${state}`);
  const args = { query: q, response_mode: mode.value, page_size: Number(size.value) };
  if (cursor) args.cursor = cursor;
  const { status, env } = await tool("semantic_search", args);
  if (status !== 200) { fill(results, errorBox(env, status)); fill(more); return; }
  const p = env.pagination;
  if (!env.results.length) {
    fill(results, el("p", { class: "empty", id: "no-results" }, env._metadata.message || "Nothing found."));
    fill(more);
    return;
  }
  const warnings = (env.warnings || []).map((w) => el("p", { class: "notice" }, w.message));
  const list = cursor ? results : fill(results, el("p", { class: "muted", id: "result-count" }, `${n(p.total_available)} results`), warnings);
  list.append(...env.results.map(hit));
  fill(more, p.has_more ? el("button", { type: "button", onclick: () => run(p.cursor) }, "More results") : null);
  document.body.dataset.searched = String(p.returned_count);
}

if (query.value.trim()) await run(null);
document.body.dataset.ready = "1";
