// Interaction pages for the auth-code flow: a login form that really checks passwords (the library's
// devInteractions accepts anything) and automatic consent, since the only interactive client is first-party.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { InteractionDetails, Provider } from "oidc-provider";
import { escapeHtml, page } from "./html.js";
import { checkPassword, type IdpUser } from "./users.js";

const MAX_FORM_BYTES = 16 * 1024;

export async function handleInteraction(
  provider: Provider,
  users: ReadonlyMap<string, IdpUser>,
  req: IncomingMessage,
  res: ServerResponse,
  formAction: string,
): Promise<void> {
  if (req.method !== "GET" && req.method !== "POST") {
    res.setHeader("Allow", "GET, POST");
    return sendHtml(res, 405, page("Method not allowed", ""));
  }

  let details: InteractionDetails;
  try {
    details = await provider.interactionDetails(req, res);
  } catch {
    return sendHtml(
      res,
      400,
      page("Login expired", "<p>This login attempt is unknown or expired. Start again from the application.</p>"),
    );
  }
  if (!formAction.endsWith(`/${details.uid}`)) {
    return sendHtml(res, 400, page("Login expired", "<p>This login attempt does not match your session.</p>"));
  }

  if (details.prompt.name === "consent") return autoConsent(provider, details, req, res);
  if (details.prompt.name !== "login") {
    return sendHtml(res, 400, page("Unsupported", `<p>Unsupported prompt ${escapeHtml(details.prompt.name)}.</p>`));
  }

  const clientId = String(details.params.client_id ?? "");
  const listed = userList(users);
  if (req.method === "GET") return sendHtml(res, 200, loginPage({ formAction, clientId, users: listed }));

  const form = await readForm(req);
  const username = form.get("username") ?? "";
  if (!checkPassword(users.get(username), form.get("password") ?? "")) {
    return sendHtml(
      res,
      401,
      loginPage({ formAction, clientId, users: listed, username, error: "Invalid username or password." }),
    );
  }
  await provider.interactionFinished(req, res, { login: { accountId: username } }, { mergeWithLastSubmission: false });
}

/** Grants exactly what the provider reports missing, then resumes the authorization request. */
async function autoConsent(
  provider: Provider,
  details: InteractionDetails,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const accountId = details.session?.accountId;
  const clientId = String(details.params.client_id ?? "");
  if (!accountId) return sendHtml(res, 400, page("Login expired", "<p>No signed-in user.</p>"));

  const grant =
    (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
    new provider.Grant({ accountId, clientId });
  const missing = details.prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(" "));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

interface LoginView {
  formAction: string;
  clientId: string;
  /** The users list (HTML), so a developer need not look them up. */
  users: string;
  username?: string;
  error?: string;
}

/**
 * Each user with its roles and tenants. A password is named only where it is the username (the
 * built-in users); a CMS_IDP_USERS entry with its own password keeps it to the file.
 */
function userList(users: ReadonlyMap<string, IdpUser>): string {
  const items = [...users.values()].map((user) => {
    const tenants = user.tenants ? `, tenants ${user.tenants.join(" ")}` : "";
    const password = user.password === user.username ? " (password = username)" : "";
    return `<li><code>${escapeHtml(user.username)}</code>: ${escapeHtml(user.roles.join(" ") + tenants)}${password}</li>`;
  });
  return `<details open><summary>Users</summary><ul id="idp-users">${items.join("")}</ul></details>`;
}

/** Field and button ids follow Keycloak's login theme (username, password, kc-login) so browser tests fit both. */
function loginPage(view: LoginView): string {
  const error = view.error ? `<p id="input-error" role="alert" style="color:#b00">${escapeHtml(view.error)}</p>` : "";
  return page(
    "Sign in to CMS",
    `<p>Development identity provider for client <code>${escapeHtml(view.clientId)}</code>.
Its users and passwords are for development only.</p>
${view.users}
${error}
<form id="kc-form-login" method="post" action="${escapeHtml(view.formAction)}">
<p><label for="username">Username</label><br><input id="username" name="username" autocomplete="username"
 autofocus required value="${escapeHtml(view.username ?? "")}"></p>
<p><label for="password">Password</label><br><input id="password" name="password" type="password"
 autocomplete="current-password" required></p>
<p><button id="kc-login" name="login" type="submit">Sign In</button></p>
</form>`,
  );
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) break; // an oversized login form is never legitimate; treat as empty
    chunks.push(chunk);
  }
  return new URLSearchParams(size > MAX_FORM_BYTES ? "" : Buffer.concat(chunks).toString("utf8"));
}

export function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.statusCode = status;
  res.setHeader("Content-Type", "text/html; charset=utf-8");
  res.setHeader("Cache-Control", "no-store");
  // No form-action: Chrome applies it to the redirect chain after the POST, which ends at the app's origin.
  res.setHeader("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
  res.end(html);
}
