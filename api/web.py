"""HTML pages: the paste page and one permalink page per record. No front-end build step."""

from __future__ import annotations

from html import escape
from pathlib import Path

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse, HTMLResponse

from errkb.api.deps import get_kb
from errkb.kb import KnowledgeBase
from errkb.model import RecordDetail

router = APIRouter(include_in_schema=False)
STATIC = Path(__file__).parent / "static"


@router.get("/")
def index() -> FileResponse:
    return FileResponse(STATIC / "index.html")


def _page(title: str, body: str) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)} · errkb</title>'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<link rel="stylesheet" href="/static/style.css"></head><body><header><a href="/">errkb</a></header>'
            f"<main>{body}</main></body></html>")


def _list(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in items) + "</ul>" if items else ""


# The libraries a verification run names on a record page (a reduced build says so in its version).
SHOWN_LIBRARIES = ("flash-attn", "flash-attn-3", "flash-attn-4", "sglang", "flashinfer-python", "vllm")


def render_record(d: RecordDetail) -> str:
    parts = [f'<article class="record" id="{escape(d.id)}">',
             f"<h1>{escape(d.title)}</h1>",
             f'<p class="meta"><span class="badge status-{escape(d.verification.status)}">{escape(d.verification.status)}</span> '
             f"<code>{escape(d.error_class)}</code> · {escape(', '.join(d.backends))} · <code>{escape(d.id)}</code></p>",
             f'<pre class="message">{escape(d.message)}</pre>',
             f"<h2>What it means</h2><p>{escape(d.meaning)}</p>",
             "<h2>When it happens</h2>" + _list(d.triggers.conditions)]
    if d.situations:
        parts.append("<h3>Common situations</h3>" + _list(d.situations))
    parts.append("<h2>Fixes</h2>")
    for fix in d.fixes:
        parts.append(f'<section class="fix"><h3>{escape(fix.title)}</h3><p>{escape(fix.explanation)}</p>')
        if fix.before:
            parts.append(f'<p class="label">Before</p><pre><code>{escape(fix.before)}</code></pre>')
        if fix.after:
            parts.append(f'<p class="label">After</p><pre><code>{escape(fix.after)}</code></pre>')
        if fix.caveats:
            parts.append(f'<p class="caveat">{escape(fix.caveats)}</p>')
        parts.append("</section>")
    parts.append("<h2>Verification</h2>")
    if not d.verified_in:
        parts.append(f"<p>Not run on a GPU yet ({escape(d.verification.status)}).</p>")
    for run in d.verified_in:
        libs = ", ".join(f"{k} {v}" for k, v in sorted(run.libraries.items()) if k in SHOWN_LIBRARIES)
        env = f"{run.gpu} (compute capability {run.compute_capability}, torch {run.torch}{', ' + libs if libs else ''})"
        parts.append(f'<p class="verified">Ran on {escape(env)}:</p><ul>' + "".join(
            f'<li><code>{escape(case)}</code> <span class="badge status-{escape(status)}">{escape(status)}</span></li>'
            for case, status in sorted(run.cases.items())) + "</ul>")
    if d.verification.note:
        parts.append(f'<p class="caveat">{escape(d.verification.note)}</p>')
    if d.entry_points:
        parts.append(render_entry_points(d))
    parts.append("<h2>Where it is raised</h2><ul>")
    for loc in d.raised_at:
        where = f"{loc.package} {loc.version}: {loc.path}:{loc.line}"
        parts.append(f'<li><a href="{escape(loc.url)}">{escape(where)}</a></li>' if loc.url else f"<li>{escape(where)}</li>")
    parts.append("</ul>")
    if d.origin:
        parts.append(f'<p class="origin">{escape(d.origin)}</p>')
    if d.evidence:
        parts.append("<p>Answers when the paste names: " + ", ".join(
            f"<code>{escape(e.contains)}</code> ({escape(e.package)})" for e in d.evidence) + "</p>")
    if d.failing_file:
        parts.append("<p>When the line names the file that failed, only: " + ", ".join(
            f"<code>{escape(e.contains)}</code> ({escape(e.package)})" for e in d.failing_file) + "</p>")
    if d.affected:
        parts.append("<h2>Versions</h2><ul>")
        for a in d.affected:
            parts.append(f"<li>{escape(a.package)}: {escape(a.releases.summary)}</li>")
        parts.append("</ul>")
    if d.related:
        parts.append("<h2>Related</h2><ul>" + "".join(
            f'<li><a href="/errors/{escape(r)}">{escape(r)}</a></li>' for r in d.related) + "</ul>")
    parts.append(f'<p class="provenance">Read on {d.provenance.read_on}: {escape("; ".join(d.provenance.sources))}</p></article>')
    return "".join(parts)


ENTRY_WORDS = {"reached": "the user sees this message first", "preempted": "another message comes first",
               "not-raised": "the call goes through without this message", "error": "the step failed to run",
               "skipped": "could not run there", "not-run": "not run yet"}


def render_entry_points(d: RecordDetail) -> str:
    """How users reach the message (a server's launch, an engine, model loading), each with what its
    entry-point step showed in each environment."""
    parts = ['<h2>Reached from</h2><ul class="entry-points">']
    for point in d.entry_points:
        parts.append(f'<li><span class="entry-kind">{escape(point.kind)}</span>: <code>{escape(point.call)}</code>')
        if point.note:
            parts.append(f'<p class="caveat">{escape(point.note)}</p>')
        parts.append("<ul>")
        for res in (r for r in d.entry_point_results if r.kind == point.kind):
            where = f" on {res.gpu} (compute capability {res.compute_capability})" if res.gpu else ""
            seen = f': <code>{escape(res.first_seen)}</code>' if res.first_seen else ""
            parts.append(f'<li><span class="badge entry-{escape(res.verdict)}">{escape(res.verdict)}</span>'
                         f"{escape(where)}: {escape(ENTRY_WORDS[res.verdict])}{seen}</li>")
        parts.append("</ul></li>")
    parts.append("</ul>")
    return "".join(parts)


@router.get("/errors/{record_id}", response_class=HTMLResponse)
def record_page(record_id: str, kb: KnowledgeBase = Depends(get_kb)) -> HTMLResponse:
    detail = kb.details.get(record_id)
    if detail is None:
        return HTMLResponse(_page("Not found", f"<p>No record <code>{escape(record_id)}</code>.</p>"), 404)
    return HTMLResponse(_page(detail.title, render_record(detail)))
