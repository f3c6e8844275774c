// Lifecycle: each product's release cycles on a timeline (release, end of active
// support, end of support, end of extended support) with a movable as-of date;
// the ends of support across vendors in the next N days; which cycle a version is
// in and until when it is supported (get_lifecycle).
// Timelines come from the explorer view lifecycle_timeline (get_lifecycle's items,
// unpaged). Performance mark: lifecycle-drawn.
import { el, fill, header, tool, view, errorBox, params, n } from "/static/js/common.js";

const SVG = "http://www.w3.org/2000/svg";
const main = document.getElementById("main");
await header("/lifecycle");

const today = new Date().toISOString().slice(0, 10);
const vendorInput = el("input", { id: "vendor", value: params.get("vendor") || "", placeholder: "vendor, e.g. Microsoft", "aria-label": "Vendor" });
const asOf = el("input", { type: "date", id: "as-of", value: params.get("as_of") || today, "aria-label": "As of" });
const within = el("input", { type: "number", id: "within-days", min: "1", max: "10000", value: params.get("within") || "90", "aria-label": "Days ahead", class: "narrow" });
const productInput = el("input", { id: "product", placeholder: "product, e.g. PostgreSQL", "aria-label": "Product" });
const versionInput = el("input", { id: "version", placeholder: "version, e.g. 17.0.2", "aria-label": "Version" });
const versionAnswer = el("div", { id: "version-answer", role: "status" });
const risk = el("div", { id: "risk" });
const timelines = el("div", { id: "timelines" });

fill(main,
  el("h1", {}, "Lifecycle"),
  el("form", { class: "toolbar", onsubmit: (e) => { e.preventDefault(); refresh(); } },
    el("label", { for: "vendor" }, "Vendor"), vendorInput,
    el("label", { for: "as-of" }, "As of"), asOf,
    el("button", { type: "submit" }, "Show")),
  el("div", { class: "grid" },
    el("section", { "aria-labelledby": "cycles-heading" }, el("h2", { id: "cycles-heading" }, "Release cycles"), timelines),
    el("aside", {},
      el("section", { class: "panel" },
        el("h2", {}, "Which cycle is a version in?"),
        el("form", { class: "toolbar", id: "version-form", onsubmit: (e) => { e.preventDefault(); lookupVersion(); } },
          productInput, versionInput, el("button", { type: "submit" }, "Look up")),
        versionAnswer),
      el("section", { class: "panel" },
        el("h2", {}, "Ends of support coming up"),
        el("form", { class: "toolbar", onsubmit: (e) => { e.preventDefault(); loadRisk(); } },
          el("label", { for: "within-days" }, "In the next"), within, "days", el("button", { type: "submit" }, "List")),
        el("p", { class: "hint" }, "Across every vendor, or the vendor above."),
        risk))),
);

asOf.addEventListener("change", () => refresh());

function remember() {
  const query = new URLSearchParams();
  if (vendorInput.value.trim()) query.set("vendor", vendorInput.value.trim());
  if (asOf.value && asOf.value !== today) query.set("as_of", asOf.value);
  history.replaceState(null, "", `/lifecycle${query.toString() ? "?" + query : ""}`);
}

const dateOf = (value) => (typeof value === "string" ? Date.parse(value) : null);
const label = (value) => (value === true ? "yes (date unknown)" : value === false ? "not planned" : value ?? "unknown");
const statusClass = (status) => "status-" + String(status).replace(/\s+/g, "-");

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

function timeline(cycles, asOfDate) {
  const W = 1000, LEFT = 110, RIGHT = 16, ROW = 18, TOP = 22;
  const times = [];
  for (const c of cycles) {
    for (const v of [c.release_date, c.support.active_support_ends, c.support.support_ends, c.support.extended_support_ends]) {
      const t = dateOf(v);
      if (t) times.push(t);
    }
  }
  const at = Date.parse(asOfDate);
  times.push(at);
  const lo = Math.min(...times), hi = Math.max(...times, at + 365 * 864e5);
  const x = (t) => LEFT + ((W - LEFT - RIGHT) * (t - lo)) / Math.max(1, hi - lo);
  const H = TOP + ROW * cycles.length + 4;
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "Timeline of the release cycles" });
  for (let year = new Date(lo).getUTCFullYear() + 1; year <= new Date(hi).getUTCFullYear(); year++) {
    const t = Date.UTC(year, 0, 1);
    if ((hi - lo) / 864e5 / 365 > 16 && year % 5) continue;
    root.append(svg("line", { x1: x(t), x2: x(t), y1: TOP - 6, y2: H, stroke: "#e5e9ef" }));
    const text = svg("text", { x: x(t) + 2, y: 12 });
    text.textContent = String(year);
    root.append(text);
  }
  cycles.forEach((c, i) => {
    const y = TOP + i * ROW;
    const name = svg("text", { x: 4, y: y + 12 });
    name.textContent = c.label || c.cycle;
    root.append(name);
    const start = dateOf(c.release_date);
    if (!start) return;
    let from = start;
    for (const [value, cls] of [[c.support.active_support_ends, "seg-active"], [c.support.support_ends, "seg-support"], [c.support.extended_support_ends, "seg-extended"]]) {
      const end = value === false ? hi : dateOf(value);
      if (!end || end <= from) continue;
      const rect = svg("rect", { x: x(from), y: y + 3, width: Math.max(1, x(end) - x(from)), height: ROW - 6, class: cls });
      const tip = svg("title");
      tip.textContent = `${c.label || c.cycle}: ${cls.slice(4)} until ${value === false ? "no end planned" : value}`;
      rect.append(tip);
      root.append(rect);
      from = end;
    }
  });
  root.append(svg("line", { x1: x(at), x2: x(at), y1: TOP - 8, y2: H, class: "asof-line" }));
  return root;
}

function productSection(product, cycles, asOfDate) {
  const rows = cycles.map((c) => el("tr", {},
    el("th", { scope: "row" }, c.label || c.cycle),
    el("td", { class: `status ${statusClass(c.status)}`, "data-cycle": c.cycle }, c.status),
    el("td", {}, c.release_date || "–"),
    el("td", { class: "hide-narrow" }, label(c.support.active_support_ends)),
    el("td", {}, label(c.support.support_ends)),
    el("td", { class: "hide-narrow" }, label(c.support.extended_support_ends)),
    el("td", { class: "hide-narrow" }, c.latest || "")));
  return el("section", { class: "timeline", "data-product": product },
    el("h3", {}, product, el("span", { class: "muted" }, ` · ${cycles.length} cycles`)),
    timeline(cycles, asOfDate),
    el("details", {}, el("summary", {}, "Cycles as a table"),
      el("div", { class: "table-wrap" }, el("table", {},
        el("thead", {}, el("tr", {}, ["Cycle", "Status", "Released", "Active support until", "Support until", "Extended until", "Latest"].map((h, i) => el("th", { scope: "col", class: [3, 5, 6].includes(i) ? "hide-narrow" : null }, h)))),
        el("tbody", {}, rows)))));
}

let loading = 0;

async function loadCycles() {
  const vendor = vendorInput.value.trim();
  const mine = ++loading;
  if (!vendor) {
    fill(timelines, el("p", { class: "empty" }, "Give a vendor to see its products' release cycles."));
    return;
  }
  fill(timelines, el("p", { class: "muted" }, "Loading…"));
  const { status, env } = await view("lifecycle_timeline", { vendor_name: vendor, as_of: asOf.value || today });
  if (mine !== loading) return;
  if (status !== 200) { fill(timelines, errorBox(env, status)); return; }
  const r = env.results;
  if (!r.products.length) {
    fill(timelines, el("p", { class: "empty", id: "no-cycles" }, env._metadata.message || "No release cycles for this vendor."));
  } else {
    fill(timelines,
      el("p", { class: "muted", id: "cycle-count" }, `${r.vendor}: ${n(r.products.length)} products, ${n(r.cycle_count)} cycles, as of ${r.as_of}. `,
        el("span", { class: "legend" }, el("span", {}, el("span", { class: "swatch seg-active-key" }), "active support"), el("span", {}, el("span", { class: "swatch seg-support-key" }), "support"), el("span", {}, el("span", { class: "swatch seg-extended-key" }), "extended support"))),
      r.products.map((p) => productSection(p.product, p.cycles, r.as_of)));
  }
  timelines.dataset.complete = "1";
  timelines.dataset.asOf = r.as_of;
  requestAnimationFrame(() => performance.mark("lifecycle-drawn"));
}

let riskAsked = 0;

async function loadRisk() {
  const mine = ++riskAsked;
  const args = { within_days: Number(within.value) || 90, as_of: asOf.value || today, response_mode: "metadata", page_size: 100 };
  if (vendorInput.value.trim()) args.vendor_name = vendorInput.value.trim();
  const { status, env } = await tool("get_lifecycle", args);
  if (mine !== riskAsked) return; // a newer request's answer is coming
  if (status !== 200) { fill(risk, errorBox(env, status)); return; }
  const r = env.results;
  if (!r.events.length) { fill(risk, el("p", { class: "empty" }, `No end of support from ${r.as_of} to ${r.until}.`)); return; }
  fill(risk, el("p", { class: "muted" }, `${n(env.pagination.total_available)} ends of support from ${r.as_of} to ${r.until}${env.pagination.has_more ? ` (the first ${r.events.length})` : ""}:`),
    el("div", { class: "table-wrap" }, el("table", { id: "risk-table" },
      el("thead", {}, el("tr", {}, ["Date", "Product", "Ends"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, r.events.map((e) => el("tr", {},
        el("td", {}, e.date, el("div", { class: "muted" }, `in ${e.days} d`)),
        el("td", {}, `${e.product} ${e.cycle}`, el("div", {}, el("a", { href: `/lifecycle?vendor=${encodeURIComponent(e.vendor)}` }, e.vendor))),
        el("td", {}, e.ends)))))));
}

async function lookupVersion() {
  const product = productInput.value.trim();
  const version = versionInput.value.trim();
  if (!product || !version) { fill(versionAnswer, el("p", { class: "hint" }, "Give a product and a version.")); return; }
  const args = { product, version, as_of: asOf.value || today, response_mode: "preview", page_size: 500 };
  if (vendorInput.value.trim()) args.vendor_name = vendorInput.value.trim();
  const { status, env } = await tool("get_lifecycle", args);
  if (status !== 200) {
    const cycles = ((env.error || {}).details || {}).cycles;
    fill(versionAnswer, errorBox(env, status), cycles ? el("p", {}, "Its cycles: ", cycles.join(", ")) : null);
    return;
  }
  const r = env.results;
  // the answer lists the product's cycles; the version's is the one it names
  const c = r.cycles.find((cycle) => cycle.cycle === r.version.cycle);
  if (!c) {
    fill(versionAnswer, el("p", { id: "version-result" }, `${r.version.version} is in ${r.products[0].product} ${r.version.cycle}.`));
    return;
  }
  fill(versionAnswer, el("p", { id: "version-result" },
    `${r.version.version} is in ${r.products[0].product} ${c.label || c.cycle}: `,
    el("strong", { class: statusClass(c.status) }, c.status),
    ` as of ${r.as_of}; supported until ${label(c.support.support_ends)}`,
    c.support.extended_support_ends ? `, extended support until ${label(c.support.extended_support_ends)}` : "",
    r.version.is_latest ? " (its latest release)." : c.latest ? ` (latest release: ${c.latest}).` : "."));
}

function refresh() {
  remember();
  loadCycles();
  loadRisk();
  if (productInput.value.trim() && versionInput.value.trim()) lookupVersion();
}

refresh();
document.body.dataset.ready = "1";
