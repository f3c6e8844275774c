// Vendors: a search box with type-ahead over the server's vendor disambiguation
// (find_vendor_info, metadata mode), and every vendor with its counts (list_vendors).
import { el, fill, header, tool, errorBox, n } from "/static/js/common.js";

const main = document.getElementById("main");
await header("/");

const input = el("input", {
  type: "search", id: "vendor-search", role: "combobox", "aria-expanded": "false",
  "aria-controls": "vendor-options", "aria-autocomplete": "list", autocomplete: "off",
  placeholder: "Type a vendor: microsoft corp, aple, IBM…",
});
const options = el("ul", { id: "vendor-options", role: "listbox", "aria-label": "Vendors", hidden: true });
const answer = el("div", { class: "answer", id: "vendor-answer", "aria-live": "polite" });
const list = el("div", { id: "vendor-list" });
fill(
  main,
  el("h1", {}, "Vendors"),
  el("label", { for: "vendor-search" }, "Find a vendor "),
  el("span", { class: "hint" }, "(case, legal suffixes and small typos do not matter)"),
  el("div", { class: "typeahead" }, input, options),
  answer,
  el("h2", {}, "Every vendor"),
  list,
);

let choices = [];
let active = -1;
let asked = 0;

function show(names) {
  choices = names;
  active = names.length ? 0 : -1;
  fill(options, names.map((name, i) => el("li", {
    role: "option", id: `vendor-option-${i}`, "aria-selected": i === active ? "true" : "false",
    onmousedown: (e) => { e.preventDefault(); go(name); },
  }, name)));
  options.hidden = !names.length;
  input.setAttribute("aria-expanded", names.length ? "true" : "false");
  if (active >= 0) input.setAttribute("aria-activedescendant", `vendor-option-${active}`);
  else input.removeAttribute("aria-activedescendant");
}

function go(name) {
  location.href = `/vendor?name=${encodeURIComponent(name)}`;
}

async function lookup() {
  const text = input.value.trim();
  const mine = ++asked;
  if (!text) { show([]); fill(answer); return; }
  const { status, env } = await tool("find_vendor_info", { vendor_name: text, response_mode: "metadata" });
  if (mine !== asked) return; // a newer keystroke's answer is coming
  const code = (env.error || {}).code;
  if (status === 200) {
    const r = env.results;
    show([r.vendor_name]);
    fill(answer, el("p", { id: "vendor-unique" }, "One vendor: ", el("a", { href: `/vendor?name=${encodeURIComponent(r.vendor_name)}` }, r.vendor_name),
      ` — ${n(r.statistics.entity_count)} entities, ${n(r.statistics.relationship_count)} relationships. Press Enter to open it.`));
  } else if (code === "VENDOR_AMBIGUOUS") {
    const names = env.error.details.suggestions;
    show(names);
    fill(answer, el("p", { id: "vendor-ambiguous" }, `“${text}” could be ${names.length} vendors: choose one.`));
  } else if (code === "VENDOR_NOT_FOUND") {
    const names = env.error.details.suggestions || [];
    show(names);
    fill(answer, el("p", { id: "vendor-not-found" }, `No vendor is called “${text}”.`, names.length ? " Did you mean one of these?" : " Try another spelling, or search the notes."));
  } else {
    show([]);
    fill(answer, errorBox(env, status));
  }
}

let timer = 0;
input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(lookup, 180); });
input.addEventListener("keydown", (e) => {
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    if (!choices.length) return;
    e.preventDefault();
    active = (active + (e.key === "ArrowDown" ? 1 : choices.length - 1)) % choices.length;
    [...options.children].forEach((li, i) => li.setAttribute("aria-selected", i === active ? "true" : "false"));
    input.setAttribute("aria-activedescendant", `vendor-option-${active}`);
  } else if (e.key === "Enter") {
    e.preventDefault();
    if (active >= 0) go(choices[active]);
    else lookup();
  } else if (e.key === "Escape") {
    show([]);
  }
});

async function loadVendors(cursor, rows) {
  const args = { page_size: 100 };
  if (cursor) args.cursor = cursor;
  const { status, env } = await tool("list_vendors", args);
  if (status !== 200) { fill(list, errorBox(env, status)); return; }
  if (!env.results.length && !cursor) {
    fill(list, el("div", { class: "empty", id: "no-vendors" }, "The knowledge base has no vendors yet. Build it from notes: ",
      el("code", {}, "make explore"), " (the bundled sample) or ", el("code", {}, "python -m extraction rebuild-graph PATH"), "."));
    return;
  }
  for (const v of env.results) {
    rows.append(el("tr", {},
      el("td", {}, el("a", { href: `/vendor?name=${encodeURIComponent(v.vendor_name)}` }, v.vendor_name)),
      el("td", { class: "num" }, n(v.document_count)),
      el("td", { class: "num hide-narrow" }, n(v.chunk_count)),
      el("td", { class: "num" }, n(v.entity_count)),
      el("td", { class: "num" }, n(v.relationship_count)),
      el("td", { class: "hide-narrow" }, el("a", { href: `/lifecycle?vendor=${encodeURIComponent(v.vendor_name)}` }, "lifecycle")),
    ));
  }
  const p = env.pagination;
  fill(list.querySelector(".count"), `${n(p.total_available)} vendors`);
  const more = list.querySelector(".more");
  if (p.has_more) fill(more, el("button", { type: "button", onclick: () => loadVendors(p.cursor, rows) }, "Show more vendors"));
  else fill(more);
}

const rows = el("tbody", { id: "vendor-rows" });
fill(list,
  el("p", { class: "count muted" }),
  el("div", { class: "table-wrap" }, el("table", {},
    el("thead", {}, el("tr", {},
      el("th", { scope: "col" }, "Vendor"), el("th", { scope: "col", class: "num" }, "Notes"),
      el("th", { scope: "col", class: "num hide-narrow" }, "Chunks"), el("th", { scope: "col", class: "num" }, "Entities"),
      el("th", { scope: "col", class: "num" }, "Relationships"), el("th", { scope: "col", class: "hide-narrow" }, ""))),
    rows)),
  el("p", { class: "more" }),
);
await loadVendors(null, rows);
document.body.dataset.ready = "1";
