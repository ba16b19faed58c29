"""Two small server-rendered pages, the sign-in and the OAuth consent screen, so that an MCP
client's OAuth flow works before the web app has its own `/login` and `/oauth/consent` routes
(the web app's issue replaces these). They call the same JSON API the web app will."""

from __future__ import annotations

import html
import secrets

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from app.deps import AppSettings
from app.routers.oidc import LOGIN_PATH as OIDC_LOGIN_PATH
from app.routers.oidc import configured as oidc_configured
from app.spa import page_headers

router = APIRouter(include_in_schema=False)

_STYLE = """
body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;
color:#1f2937}h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}
input{width:100%;padding:.5rem;border:1px solid #cbd5e1;border-radius:.4rem;box-sizing:border-box}
button{margin:1rem .5rem 0 0;padding:.5rem 1rem;border-radius:.4rem;border:1px solid #1d4ed8;
background:#1d4ed8;color:white;cursor:pointer}button.secondary{background:white;color:#1d4ed8}
.muted{color:#64748b}.error{color:#b91c1c}code{background:#f1f5f9;padding:0 .2rem}
"""

_LOGIN_SCRIPT = """
// Only a page of this site: the browser resolves `next` the way it would navigate (a "\\" or
// a tab in "/\\evil.example" still leads off-site, which a prefix check would miss).
const next = new URL(new URLSearchParams(location.search).get("next") || "/", location.origin);
const safeNext = next.origin === location.origin ? next.pathname + next.search : "/";
document.getElementById("form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const reply = await fetch("/api/auth/login", {
    method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({email: event.target.email.value, password: event.target.password.value}),
  });
  if (reply.ok) { location.assign(safeNext); return; }
  const body = await reply.json().catch(() => ({}));
  document.getElementById("error").textContent =
    (body.error && body.error.message) || "Sign-in failed.";
});
"""

_CONSENT_SCRIPT = """
const tx = new URLSearchParams(location.search).get("tx") || "";
const show = (id, text) => { document.getElementById(id).textContent = text; };
async function load() {
  const reply = await fetch(`/api/oauth/consent/${encodeURIComponent(tx)}`);
  if (reply.status === 401) {
    location.assign(`/login?next=${encodeURIComponent(location.pathname + location.search)}`);
    return;
  }
  const body = await reply.json();
  if (!reply.ok) { show("error", body.error.message); return; }
  show("client", body.client_name);
  show("host", body.redirect_host);
  show("uri", body.redirect_uri);
  show("role", body.role);
  show("tools", body.tools.join(", "));
  document.getElementById("ask").hidden = false;
}
async function answer(approve) {
  const reply = await fetch(`/api/oauth/consent/${encodeURIComponent(tx)}`, {
    method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({approve}),
  });
  const body = await reply.json();
  if (!reply.ok) { show("error", body.error.message); return; }
  location.assign(body.redirect_to);
}
document.getElementById("approve").addEventListener("click", () => answer(true));
document.getElementById("deny").addEventListener("click", () => answer(false));
load();
"""


def _page(title: str, body: str, script: str) -> HTMLResponse:
    nonce = secrets.token_urlsafe(16)
    document = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(title)} · Corpus</title><style>{_STYLE}</style></head>"
        f'<body>{body}<script nonce="{nonce}">{script}</script></body></html>'
    )
    # Only our inline script runs, and no other site may frame the page (a framed consent
    # screen could be clicked through by a hidden overlay).
    return HTMLResponse(
        document, headers=page_headers(script_src=f"'nonce-{nonce}'", cache="no-store")
    )


# Why an OpenID Connect sign-in came back to this page (app/routers/oidc.py sends the codes).
# Only these codes are shown: the query string is never echoed into the page.
_SIGN_IN_ERRORS = {
    "oidc": "Signing in with your identity provider failed. Try again, or use your password.",
    "oidc_forbidden": (
        "Your identity provider signed you in, but that account may not use Corpus. "
        "Ask an admin to invite you."
    ),
}


@router.get("/login")
async def login_page(settings: AppSettings, error: str | None = None) -> HTMLResponse:
    """The sign-in form, with the single sign-on link when OpenID Connect is configured."""
    sso = (
        f'<p class="muted">or <a href="{OIDC_LOGIN_PATH}">sign in with single sign-on</a></p>'
        if oidc_configured(settings)
        else ""
    )
    return _page(
        "Sign in",
        '<h1>Sign in to Corpus</h1><form id="form">'
        '<label for="email">Email</label><input id="email" name="email" type="email" required>'
        '<label for="password">Password</label>'
        '<input id="password" name="password" type="password" required>'
        f'<button type="submit">Sign in</button></form>{sso}'
        f'<p id="error" class="error">{html.escape(_SIGN_IN_ERRORS.get(error or "", ""))}</p>',
        _LOGIN_SCRIPT,
    )


@router.get("/oauth/consent")
async def consent_page() -> HTMLResponse:
    """The consent screen an MCP client's authorization request leads to."""
    return _page(
        "Connect an app",
        # The redirect host leads: it is where the answer goes, and the one thing a client
        # cannot choose freely. Its name is whatever it registered, and says so.
        '<div id="ask" hidden><h1>Connect <span id="host"></span> to Corpus?</h1>'
        "<p>An app there wants to use Corpus as you. After you approve, your browser goes to "
        '<code id="uri"></code>.</p>'
        '<p>It calls itself <strong id="client"></strong> '
        '<span id="self-declared" class="muted">(a name the app chose for itself; '
        "Corpus has not checked it)</span>.</p>"
        '<p>It will act with your role, <strong id="role"></strong>, and may use: '
        '<span id="tools"></span>.</p>'
        '<button id="approve">Approve</button>'
        '<button id="deny" class="secondary">Deny</button></div>'
        '<p id="error" class="error"></p>',
        _CONSENT_SCRIPT,
    )
