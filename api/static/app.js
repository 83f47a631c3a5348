// The paste page: POST the text to /v1/match and show each match. Text is inserted with
// textContent only, so nothing from the dataset or the paste is ever parsed as HTML.
//
// A lookup has a URL: after it, the address bar holds the pasted text in the fragment
// (`/#q=<the text, form-encoded>`), which the browser never sends to a server. Opening such a URL
// fills the box and runs the lookup. Texts over MAX_SHARED_BYTES are not put in the URL.
"use strict";

const MAX_SHARED_BYTES = 4096;  // UTF-8 bytes of pasted text that a lookup's URL may hold
const LIMIT = 5;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function codeBlock(label, code) {
  if (!code) return null;
  return el("div", {}, el("p", { class: "label" }, label), el("pre", {}, el("code", {}, code)));
}

// ------------------------------------------------------------------ rank and why

// Literal characters a template pins down (its placeholders removed): the server breaks ties
// between equal scores with this, the more specific template first.
function specificity(template) {
  const literal = (template || "").replace(/\{\{|\}\}|\{[^{}]*\}/g, t => (t === "{{" ? "{" : t === "}}" ? "}" : ""));
  return literal.replace(/\s+/g, " ").trim().length;
}

const namesEvidence = m => m.why.some(w => w.startsWith("the paste names "));

// Why a match that scores the same as the best one is listed after it (the server's order:
// score, then evidence named in the paste, then the more specific template, then records
// before sites, then id).
function tieNote(m, best) {
  if (namesEvidence(best) && !namesEvidence(m)) return "the paste names what the best match needs";
  const mine = specificity(m.template), theirs = specificity(best.template);
  if (theirs > mine) return "the best match's message template is more specific (" + theirs + " literal characters against " + mine + ")";
  if (best.kind === "record" && m.kind === "site") return "a curated record is listed before a bare site";
  return "a true tie: listed by id";
}

// "Best match" on the first card, "Alternative #n" on the others, with the score; an
// alternative scoring the same as the best says why it is listed after it.
function rankLine(m, i, matches) {
  const best = matches[0];
  const score = m.score.toFixed(2);
  if (i === 0) return el("p", { class: "rank best" }, el("strong", {}, "Best match"),
    matches.length > 1 ? " (1 of " + matches.length + ")" : null, " · score " + score);
  return el("p", { class: "rank alternative" }, el("strong", {}, "Alternative #" + (i + 1)),
    " of " + matches.length + " · score " + score,
    score === best.score.toFixed(2) ? " · same score as the best match; listed after it because " + tieNote(m, best) : null);
}

// The match's `why` list from /v1/match, and the message template it matched.
function whyBlock(m) {
  const why = el("ul", { class: "why" });
  for (const reason of m.why) why.append(el("li", {}, reason));
  if (m.template) why.append(el("li", {}, "message template: ", el("code", {}, m.template)));
  return el("div", { class: "why-block" }, el("p", { class: "why-label" }, "Why it matched:"), why);
}

// Parameter values, each `name="value"`; empty values are left out (the template's placeholder
// matched nothing), so no line ever reads `before=, after=`.
function paramsBlock(params) {
  const shown = Object.entries(params || {}).filter(([, v]) => v !== null && v !== undefined && String(v) !== "");
  if (!shown.length) return null;
  const p = el("p", { class: "params" }, "Parameters: ");
  shown.forEach(([k, v], n) => {
    if (n) p.append(", ");
    p.append(el("code", { class: "param" }, k + "=" + JSON.stringify(String(v))));
  });
  return p;
}

// ------------------------------------------------------------------ cards

function renderRecord(m, i, matches) {
  const r = m.record;
  const card = el("article", { class: "match record" + (i === 0 ? " best" : ""), "data-id": r.id, "data-rank": String(i + 1) },
    rankLine(m, i, matches),
    el("h2", {}, el("a", { href: "/errors/" + encodeURIComponent(r.id) }, r.title)),
    el("p", { class: "meta" },
      el("span", { class: "badge status-" + r.verification.status }, r.verification.status),
      r.verified_in.length ? " on " + r.verified_in.map(v => v.gpu).join(", ") + " " : " ",
      el("code", {}, r.error_class), " · " + r.backends.join(", ")),
    el("pre", { class: "message" }, m.matched_text),
    paramsBlock(m.params),
    whyBlock(m),
    el("p", {}, r.meaning));
  card.append(el("h3", {}, "Fixes"));
  for (const fix of r.fixes) {
    card.append(el("section", { class: "fix" }, el("h4", {}, fix.title), el("p", {}, fix.explanation),
      codeBlock("Before", fix.before), codeBlock("After", fix.after),
      fix.caveats ? el("p", { class: "caveat" }, fix.caveats) : null));
  }
  const where = el("ul", { class: "where" });
  for (const loc of r.raised_at) {
    const text = loc.package + " " + loc.version + ": " + loc.path + ":" + loc.line;
    where.append(el("li", {}, loc.url ? el("a", { href: loc.url }, text) : text));
  }
  if (r.raised_at.length) card.append(el("h3", {}, "Raised at"), where);
  if (r.origin) card.append(el("p", { class: "origin" }, "Origin: " + r.origin));
  if (r.evidence.length) card.append(el("p", { class: "evidence" },
    "Answers when the paste names: " + r.evidence.map(e => e.contains + " (" + e.package + ")").join(", ")));
  const versions = r.affected.map(a => a.package + ": " + a.releases.summary);
  if (versions.length) card.append(el("p", { class: "versions" }, "Versions: " + versions.join("; ")));
  const entries = entryPointsBlock(r);
  if (entries) card.append(el("h3", {}, "Reached from"), entries);
  return card;
}

// Each entry point (server launch, engine, model loading) with what its entry-point step showed.
function entryPointsBlock(r) {
  if (!r.entry_points || !r.entry_points.length) return null;
  const list = el("ul", { class: "entry-points" });
  for (const p of r.entry_points) {
    const seen = el("ul", {});
    for (const res of r.entry_point_results.filter(x => x.kind === p.kind)) {
      seen.append(el("li", {}, el("span", { class: "badge entry-" + res.verdict }, res.verdict),
        res.gpu ? " on " + res.gpu : "", res.first_seen ? ": first seen " : "",
        res.first_seen ? el("code", {}, res.first_seen) : ""));
    }
    list.append(el("li", {}, el("span", { class: "entry-kind" }, p.kind), ": ", el("code", {}, p.call), seen));
  }
  return list;
}

function renderSite(m, i, matches) {
  const s = m.site;
  return el("article", { class: "match site" + (i === 0 ? " best" : ""), "data-id": s.id, "data-rank": String(i + 1) },
    rankLine(m, i, matches),
    el("h2", {}, s.error_class ? s.error_class + ": " + s.template : s.template),
    el("p", { class: "meta" }, el("span", { class: "badge" }, "site, no curated record yet")),
    el("pre", { class: "message" }, m.matched_text),
    paramsBlock(m.params),
    whyBlock(m),
    el("p", {}, "Raised in " + s.package + " at " + s.path + " (versions " + s.occurrences.map(o => o.version).join(", ") + ")"));
}

// No match, but records whose message the paste holds once it names their library (a bare
// CUDA error line): listed as what to read and what the paste would need, not as matches.
function renderWithheld(withheld, given) {
  const unknown = given && !given.packages.length ?
    " errkb knows no kernel library by the name " + JSON.stringify(given.text) + " (frameworks and engines such as " +
    "torch, vLLM and SGLang name none)." : "";
  status.textContent = "No known error found in this text." + (withheld.length ?
    " Its message belongs to the records below, but the text does not say which library raised it: " +
    "paste the whole traceback or log, or name the library in the field above." :
    " A bare CUDA error line does not say which library raised it: paste the whole traceback or log.") + unknown;
  if (!withheld.length) return;
  const list = el("ul", { class: "withheld" });
  for (const w of withheld) {
    list.append(el("li", { "data-id": w.id }, el("a", { href: "/errors/" + encodeURIComponent(w.id) }, w.id),
      ": answers when the text names " + w.needs.map(n => n.contains).join(", ")));
  }
  results.append(el("article", { class: "match withheld" }, el("h2", {}, "Not a match yet"), list));
}

// ------------------------------------------------------------------ the lookup and its URL

const form = document.getElementById("paste-form");
const paste = document.getElementById("paste");
const project = document.getElementById("project");
const status = document.getElementById("status");
const results = document.getElementById("results");
const shareNote = document.getElementById("share-note");
let lookups = 0;  // a later lookup wins over an earlier one still in flight
let lastText = null;  // the text of the last lookup
let lastProject = "";  // and its project

// The lookup a URL holds: its text (q) and project (p), or null.
function fragmentLookup() {
  const hash = window.location.hash;
  if (!hash.startsWith("#")) return null;
  const params = new URLSearchParams(hash.slice(1));
  const q = params.get("q");
  return q ? { text: q, project: params.get("p") || "" } : null;
}

// Put the text in the address bar (a new history entry, so Back returns to the last lookup);
// a text over the bound clears the fragment and the page says why.
function share(text, proj) {
  const bytes = new TextEncoder().encode(text).length;
  const base = window.location.pathname + window.location.search;
  const fragment = new URLSearchParams(proj ? { q: text, p: proj } : { q: text }).toString();
  const url = text && bytes <= MAX_SHARED_BYTES ? base + "#" + fragment : base;
  shareNote.textContent = bytes <= MAX_SHARED_BYTES ? "" :
    "This paste (" + (bytes / 1024).toFixed(1) + " KiB) is too long to put in the page's address; links to a lookup " +
    "hold up to " + (MAX_SHARED_BYTES / 1024) + " KiB of text. Paste only the error and its last frames to share one.";
  if (url !== window.location.pathname + window.location.search + window.location.hash) history.pushState(null, "", url);
}

async function lookup(text, proj) {
  const mine = ++lookups;
  lastText = text;
  lastProject = proj;
  results.replaceChildren();
  status.textContent = "Looking up…";
  try {
    const resp = await fetch("/v1/match", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(proj ? { text: text, limit: LIMIT, project: proj } : { text: text, limit: LIMIT }),
    });
    const body = await resp.json();
    if (mine !== lookups) return;
    if (!resp.ok) { status.textContent = body.detail || ("Error " + resp.status); return; }
    const matches = body.matches;
    if (!matches.length) { renderWithheld(body.withheld || [], body.project); return; }
    status.textContent = matches.length === 1 ? "1 match" : matches.length + " matches, best first";
    matches.forEach((m, i) => results.append(m.kind === "record" ? renderRecord(m, i, matches) : renderSite(m, i, matches)));
  } catch (err) {
    if (mine === lookups) status.textContent = "Lookup failed: " + err;
  }
}

function explain(event) {
  event.preventDefault();
  const text = paste.value, proj = project.value.trim();
  share(text, proj);
  lookup(text, proj);
}

// Opening (or going Back to) a lookup's URL fills the box and runs it. A URL without one
// leaves the page as it is: the box is never emptied under the user's hands.
function fromLocation() {
  const found = fragmentLookup();
  if (found === null || (found.text === lastText && found.project === lastProject)) return;
  shareNote.textContent = "";
  paste.value = found.text;
  project.value = found.project;
  lookup(found.text, found.project);
}

form.addEventListener("submit", explain);
paste.addEventListener("keydown", event => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    form.requestSubmit();
  }
});
window.addEventListener("popstate", fromLocation);
window.addEventListener("hashchange", fromLocation);
fromLocation();
