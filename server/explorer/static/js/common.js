// What every explorer page shares: calling /api/ (through the server's frame),
// signing in, the header with the build notice, and safe DOM building.
// Note text is only ever set with textContent: nothing from the knowledge base
// becomes HTML, and links are made only for http(s) and this server's own paths.

export const BUILD_POLL_MS = 10000;

/** An element: attributes (a safe subset), then children (strings become text). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "href") node.setAttribute("href", safeHref(String(value)));
    else if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A link target that cannot run code: http(s) URLs and this server's own paths. */
export function safeHref(url) {
  const text = url.trim();
  if (/^https?:\/\//i.test(text)) return text;
  if (text.startsWith("/") && !text.startsWith("//")) return text;
  if (text.startsWith("#") || text.startsWith("?")) return text;
  return "#";
}

/** Text with http(s) URLs as links (new tab, no referrer); everything else as text. */
export function linkified(text) {
  const parts = [];
  const pattern = /https?:\/\/[^\s<>"')\]]+/g;
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    parts.push(text.slice(last, m.index));
    parts.push(el("a", { href: m[0], rel: "noopener noreferrer nofollow", target: "_blank" }, m[0]));
    last = m.index + m[0].length;
  }
  parts.push(text.slice(last));
  return parts;
}

/** Text with the given words marked (<mark>), as text nodes and mark elements. */
const STOPWORDS = new Set(["a", "an", "and", "are", "as", "at", "by", "for", "from", "in", "is", "it", "of", "on", "or", "the", "to", "was", "with"]);

export function highlighted(text, words) {
  const wanted = words
    .filter((w) => w.length > 1 && !STOPWORDS.has(w.toLowerCase()))
    .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  if (!wanted.length) return [text];
  // whole words only: "17" marks "17" and "17.2", not "17e"
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(${wanted.join("|")})(?![\\p{L}\\p{N}])`, "giu");
  return text.split(pattern).map((part, i) => (i % 2 ? el("mark", {}, part) : part));
}

export const params = new URLSearchParams(location.search);

let onSignedOut = () => {};

/** One call through /api/: {status, env}. 401 opens the sign-in form. */
export async function api(kind, name, args = {}) {
  let response;
  try {
    response = await fetch(`/api/${kind}/${encodeURIComponent(name)}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(args),
      credentials: "same-origin",
    });
  } catch (err) {
    return { status: 0, env: { error: { code: "NETWORK", message: "The server cannot be reached.", action: "Check that `python -m server --transport streamable-http` (or `make explore`) is running, then reload." } } };
  }
  let env;
  try {
    env = await response.json();
  } catch (err) {
    env = { error: { code: "HTTP_" + response.status, message: `The server answered ${response.status} without JSON.`, action: "Reload the page; the server log has details." } };
  }
  if (response.status === 401) onSignedOut(env);
  return { status: response.status, env };
}

export const tool = (name, args) => api("tools", name, args);
export const view = (name, args) => api("explorer", name, args);

/** What to tell a person about an error envelope, as an element (role=alert). */
export function errorBox(env, status) {
  const error = env.error || {};
  let what = error.message || "Something went wrong.";
  let todo = error.action || "";
  if (status === 401) {
    todo = "Sign in with an API key above (`python -m server keys create NAME` makes one).";
  } else if (status === 429) {
    const wait = (error.details || {}).reset_in_seconds;
    todo = `Too many requests for this key: wait ${wait ?? "a few"} s, then try again.`;
  } else if (status === 503) {
    todo = "The database is unreachable: the page retries when you try again; the server reconnects by itself.";
  }
  const box = el("div", { class: "error", role: "alert" }, el("strong", {}, error.code || "Error"), " ", what);
  if (todo) box.append(el("p", {}, todo));
  const suggestions = (error.details || {}).suggestions;
  if (Array.isArray(suggestions) && suggestions.length) box.dataset.suggestions = suggestions.length;
  return box;
}

/** Replace an element's children. */
export function fill(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
  return node;
}

function timeAgo(iso) {
  if (!iso) return "never";
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 90) return "just now";
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 129600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

/** The header: navigation, the session (sign in / out, local-only notice), the build. */
export async function header(active) {
  const nav = el(
    "nav",
    { "aria-label": "Pages" },
    ...[
      ["/", "Vendors"],
      ["/lifecycle", "Lifecycle"],
      ["/search", "Search"],
    ].map(([href, label]) => el("a", { href, "aria-current": href === active ? "page" : null }, label)),
  );
  const session = el("div", { class: "session" });
  const build = el("div", { class: "build", role: "status", "aria-live": "polite" });
  const top = el("header", { class: "top" }, el("a", { class: "brand", href: "/" }, "Vendor knowledge"), nav, session, build);
  document.body.prepend(top);
  const state = await (await fetch("/api/session", { credentials: "same-origin" })).json();
  const signIn = () => {
    const input = el("input", { type: "password", id: "api-key", name: "api-key", autocomplete: "off", placeholder: "kb_...", "aria-label": "API key" });
    const message = el("span", { class: "hint", role: "status" });
    const form = el(
      "form",
      {
        class: "signin",
        onsubmit: async (event) => {
          event.preventDefault();
          const response = await fetch("/api/session", {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ api_key: input.value }),
            credentials: "same-origin",
          });
          if (response.ok) location.reload();
          else {
            const env = await response.json().catch(() => ({}));
            fill(message, ((env.error || {}).message || "Refused") + " ");
          }
        },
      },
      el("label", { for: "api-key" }, "API key"),
      input,
      el("button", { type: "submit" }, "Sign in"),
      message,
    );
    return form;
  };
  if (state.signed_in) {
    fill(session, el("span", {}, "Signed in "), el("button", { type: "button", onclick: async () => {
      await fetch("/api/session", { method: "DELETE", credentials: "same-origin" });
      location.reload();
    } }, "Sign out"));
  } else if (state.local_only) {
    fill(session, el("span", { class: "local", id: "local-only" }, "Local-only mode: no key needed on this machine (127.0.0.1)"));
  } else {
    fill(session, signIn());
  }
  onSignedOut = (env) => {
    const code = (env.error || {}).code;
    const why = code === "AUTH_INVALID" ? "Your key was refused (revoked or unknown): sign in with another." : "Sign in with an API key to see the knowledge base.";
    fill(session, el("p", { class: "refused", role: "alert", id: "signed-out" }, why), signIn());
  };
  pollBuild(build);
  return state;
}

let knownBuild = null;

async function pollBuild(node) {
  const { status, env } = await view("newest_build", {});
  if (status === 200) {
    const r = env.results;
    if (!r.graph_build_id) {
      fill(node, el("span", { class: "warn" }, "No knowledge base build yet: run `make explore` or `python -m extraction rebuild-graph PATH`."));
    } else if (knownBuild !== null && r.graph_build_id !== knownBuild) {
      fill(
        node,
        el("span", { class: "fresh", id: "build-updated" }, `Knowledge base updated just now (build ${r.graph_build_id}). `),
        el("button", { type: "button", onclick: () => location.reload() }, "Show the new build"),
      );
    } else {
      fill(node, `Build ${r.graph_build_id}, updated ${timeAgo(r.finished_at)}`);
      knownBuild = r.graph_build_id;
    }
    node.dataset.build = String(r.graph_build_id);
  }
  setTimeout(() => {
    if (document.hidden) document.addEventListener("visibilitychange", () => pollBuild(node), { once: true });
    else pollBuild(node);
  }, Number(window.KB_BUILD_POLL_MS || BUILD_POLL_MS));
}

/** A number with thousands separators. */
export const n = (value) => (typeof value === "number" ? value.toLocaleString("en") : String(value ?? "–"));
