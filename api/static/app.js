// The paste page: POST the text to /v1/match and show each match. Text is inserted with
// textContent only, so nothing from the dataset or the paste is ever parsed as HTML.
"use strict";

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

function renderRecord(m) {
  const r = m.record;
  const card = el("article", { class: "match record", "data-id": r.id },
    el("h2", {}, el("a", { href: "/errors/" + encodeURIComponent(r.id) }, r.title)),
    el("p", { class: "meta" },
      el("span", { class: "badge status-" + r.verification.status }, r.verification.status),
      r.verified_in.length ? " on " + r.verified_in.map(v => v.gpu).join(", ") + " " : " ",
      el("code", {}, r.error_class), " · " + r.backends.join(", ") + " · score " + m.score.toFixed(2)),
    el("pre", { class: "message" }, m.matched_text),
    el("p", {}, r.meaning));
  const params = Object.entries(m.params);
  if (params.length) card.append(el("p", { class: "params" }, "Parameters: " + params.map(([k, v]) => k + "=" + v).join(", ")));
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
  const versions = r.affected.map(a => a.package + " " + a.first_seen + "…" + a.last_seen + (a.removed_in ? " (gone in " + a.removed_in + ")" : ""));
  if (versions.length) card.append(el("p", { class: "versions" }, "Versions: " + versions.join("; ")));
  card.append(el("p", { class: "why" }, "Why: " + m.why.join("; ")));
  return card;
}

function renderSite(m) {
  const s = m.site;
  return el("article", { class: "match site", "data-id": s.id },
    el("h2", {}, s.error_class ? s.error_class + ": " + s.template : s.template),
    el("p", { class: "meta" }, el("span", { class: "badge" }, "site, no curated record yet"),
      " score " + m.score.toFixed(2)),
    el("pre", { class: "message" }, m.matched_text),
    el("p", {}, "Raised in " + s.package + " at " + s.path + " (versions " + s.occurrences.map(o => o.version).join(", ") + ")"),
    el("p", { class: "why" }, "Why: " + m.why.join("; ")));
}

async function explain(event) {
  event.preventDefault();
  const status = document.getElementById("status");
  const results = document.getElementById("results");
  results.replaceChildren();
  status.textContent = "Looking up…";
  try {
    const resp = await fetch("/v1/match", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ text: document.getElementById("paste").value, limit: 5 }),
    });
    const body = await resp.json();
    if (!resp.ok) { status.textContent = body.detail || ("Error " + resp.status); return; }
    if (!body.matches.length) { status.textContent = "No known error found in this text."; return; }
    status.textContent = body.matches.length + " match" + (body.matches.length > 1 ? "es" : "");
    for (const m of body.matches) results.append(m.kind === "record" ? renderRecord(m) : renderSite(m));
  } catch (err) {
    status.textContent = "Lookup failed: " + err;
  }
}

document.getElementById("paste-form").addEventListener("submit", explain);
