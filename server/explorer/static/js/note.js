// Note: the note a chunk belongs to, section by section (explorer view "note"),
// with the chunk a link pointed at marked and scrolled to. The note's text is set
// as text: markup in a note shows as written and never runs; only http(s) URLs
// become links.
import { el, fill, header, view, errorBox, params, linkified } from "/static/js/common.js";

const main = document.getElementById("main");
await header("/note");
const chunk = Number(params.get("chunk"));
if (!Number.isInteger(chunk) || chunk < 1) {
  fill(main, el("h1", {}, "Note"), el("div", { class: "empty" }, "No note given: open one from a search result or an entity's mentions."));
} else {
  const { status, env } = await view("note", { chunk_id: chunk });
  if (status !== 200) {
    fill(main, el("h1", {}, "Note"), errorBox(env, status));
  } else {
    const r = env.results;
    document.title = `${r.title} · Vendor knowledge`;
    fill(main,
      el("h1", { id: "note-title" }, r.title),
      el("p", { class: "muted" },
        el("a", { href: `/vendor?name=${encodeURIComponent(r.vendor)}` }, r.vendor),
        ` · ${r.source_file}`, r.document_date ? ` · ${r.document_date}` : "", r.source_category ? ` · ${r.source_category}` : ""),
      r.sections.map((s) => el("section", { class: `note-section${s.chunk_id === chunk ? " target" : ""}`, id: `c-${s.chunk_id}`, tabindex: "-1" },
        el("div", { class: "where" }, s.context_header),
        el("pre", {}, linkified(s.text)))));
    const target = document.getElementById(`c-${chunk}`);
    if (target) { target.scrollIntoView({ block: "start" }); target.focus({ preventScroll: true }); }
  }
}
document.body.dataset.ready = "1";
