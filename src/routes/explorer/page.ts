/**
 * The explorer's HTML page and its browser script (self-contained: no CDN, no build step). Swagger UI
 * itself is rendered by @hono/swagger-ui; its one inline start-up script is allowed by its SHA-256
 * in the page's CSP (a hash-source), so no other inline script can run.
 */
import { SwaggerUI } from "@hono/swagger-ui";
import { inlineScriptHashes, pageCsp, safeJson } from "../page-policy.js";

export interface ExplorerAuth {
  authorizationUrl: string;
  tokenUrl: string;
  logoutUrl: string;
  clientId: string;
}

export interface ExplorerSettings {
  specUrl: string;
  auth: ExplorerAuth | null;
}

/**
 * The pages' Content-Security-Policy: scripts from this origin plus the hashed inline ones (styles
 * may be inline: the page's own and Swagger UI's), requests to this origin and the provider's token
 * endpoint, no framing.
 */
function explorerCsp(settings: ExplorerSettings, scriptHashes: string[]): string {
  return pageCsp({
    script: ["'self'", ...scriptHashes].join(" "),
    style: "'self' 'unsafe-inline'",
    // Try it out previews the answer's bytes from blob: URLs (images, video, audio, PDF).
    img: "'self' data: blob:",
    media: "blob:",
    // Chromium shows a PDF in <object> as a frame: both directives apply.
    object: "blob:",
    frame: "blob:",
    tokenUrl: settings.auth?.tokenUrl ?? null,
  });
}

/**
 * The explorer page and its CSP. `baseUrl` is where swagger-ui-dist is served from
 * (`${baseUrl}/swagger-ui-dist/...`).
 */
export function explorerPage(settings: ExplorerSettings, baseUrl: string): { html: string; csp: string } {
  const swaggerUi = String(
    SwaggerUI({
      url: settings.specUrl,
      baseUrl,
      deepLinking: true,
      // No badge from validator.swagger.io: nothing leaves this origin (and the CSP would refuse it).
      validatorUrl: "none",
      // explorer.js defines it: optional form fields start empty; video, audio and PDF answers are shown.
      plugins: ["window.cmsTryIt"],
      // Requests made from the page carry the token explorer.js obtained (none when auth is off).
      requestInterceptor:
        "(request) => { const s = window.cmsExplorerSession; if (s) request.headers.Authorization = 'Bearer ' + s.accessToken; return request; }",
    }),
  );
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Content resource service — API explorer</title>
<link rel="icon" type="image/png" href="${baseUrl}/swagger-ui-dist/favicon-32x32.png">
<style>#cms-session{font:14px sans-serif;padding:8px 20px;background:#f3f3f3;display:none;gap:12px;align-items:center}#cms-session.on{display:flex}#cms-error{color:#b00;font:14px sans-serif;padding:0 20px}</style>
</head>
<body>
<div id="cms-session"><span id="cms-user"></span><button id="cms-logout" type="button">Log out</button></div>
<div id="cms-error" role="alert"></div>
<script id="explorer-settings" type="application/json">${safeJson(settings)}</script>
<script src="/explorer.js"></script>
${swaggerUi}
</body>
</html>`;
  return { html, csp: explorerCsp(settings, inlineScriptHashes(html)) };
}

/**
 * Browser side. With auth on, the page itself runs the authorization code flow with PKCE (RFC 7636):
 * no token → redirect to the provider's login; back with ?code → exchange it, keep the access token
 * in sessionStorage (this tab only) and expose it to Swagger UI's request interceptor.
 */
export const EXPLORER_SCRIPT = `"use strict";
(async () => {
  const settings = JSON.parse(document.getElementById("explorer-settings").textContent);
  const errorBox = document.getElementById("cms-error");
  const KEY = "cms.explorer.";
  const b64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  const random = () => b64url(crypto.getRandomValues(new Uint8Array(32)));
  const here = location.origin + location.pathname;

  async function login(auth) {
    const params = new URLSearchParams(location.search);
    if (params.has("error")) {
      history.replaceState(null, "", here);
      errorBox.textContent = "Login failed: " + (params.get("error_description") || params.get("error")) + ". Reload to try again.";
      return null;
    }
    if (params.has("code")) {
      const state = sessionStorage.getItem(KEY + "state");
      const verifier = sessionStorage.getItem(KEY + "verifier");
      sessionStorage.removeItem(KEY + "state");
      sessionStorage.removeItem(KEY + "verifier");
      history.replaceState(null, "", here);
      if (!state || params.get("state") !== state || !verifier) {
        errorBox.textContent = "Login response did not match this tab's request. Reload to try again.";
        return null;
      }
      const res = await fetch(auth.tokenUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", code: params.get("code"), redirect_uri: here, client_id: auth.clientId, code_verifier: verifier }),
      });
      const body = await res.json().catch(() => ({}));
      if (!res.ok || !body.access_token) {
        errorBox.textContent = "Token exchange failed: " + (body.error_description || body.error || res.status);
        return null;
      }
      const session = { accessToken: body.access_token, idToken: body.id_token || null, expiresAt: Date.now() + (body.expires_in || 300) * 1000 };
      sessionStorage.setItem(KEY + "session", JSON.stringify(session));
      return session;
    }
    const saved = JSON.parse(sessionStorage.getItem(KEY + "session") || "null");
    if (saved && saved.expiresAt > Date.now() + 10000) return saved;
    const verifier = random();
    const state = random();
    sessionStorage.setItem(KEY + "verifier", verifier);
    sessionStorage.setItem(KEY + "state", state);
    const challenge = b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
    location.assign(auth.authorizationUrl + "?" + new URLSearchParams({
      response_type: "code", client_id: auth.clientId, redirect_uri: here, scope: "openid", state,
      code_challenge: challenge, code_challenge_method: "S256",
    }));
    return null;
  }

  let session = null;
  if (settings.auth) {
    session = await login(settings.auth);
    if (!session) return;
    window.cmsExplorerSession = session;
    // The library page (/library) runs this login too and waits for the session.
    document.dispatchEvent(new CustomEvent("cms-session", { detail: session }));
    const claims = JSON.parse(atob(session.accessToken.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
    document.getElementById("cms-user").textContent = "Signed in as " + (claims.preferred_username || claims.sub);
    document.getElementById("cms-session").classList.add("on");
    document.getElementById("cms-logout").onclick = () => {
      sessionStorage.removeItem(KEY + "session");
      const params = new URLSearchParams({ client_id: settings.auth.clientId, post_logout_redirect_uri: here });
      if (session.idToken) params.set("id_token_hint", session.idToken);
      location.assign(settings.auth.logoutUrl + "?" + params);
    };
  }
})();
`;
