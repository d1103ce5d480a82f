/**
 * The /library page's script (bundled by scripts/build.mjs with tus-js-client): signs in through
 * /explorer.js when auth is on, then lets the user pick a tenant, browse, upload and manage its
 * resources through the public API.
 */
import { type Api, createApi } from "./api.js";
import { createBrowser } from "./browse.js";
import { createBulk } from "./bulk.js";
import { createDetails } from "./details.js";
import { byId, clearError, el, showError } from "./dom.js";
import { createFilters } from "./filters.js";
import { createFolderTree } from "./folders.js";
import { humanBytes, nameOf } from "./format.js";
import { type Session, waitForSession } from "./session.js";
import type { Settings, TenantSummary } from "./types.js";
import { bindUploads, showResumable } from "./upload.js";

const TENANT_KEY = "cms.library.tenant";
const AUTHOR_KEY = "cms.library.author";

/**
 * The tenants to pick from: listTenants, with each one's resources and bytes, when the caller may
 * list them (auth off, a confined token, an admin: anyone else is refused, and the page never asks
 * for a refusal); else the token's claim. The input still takes any tenant typed.
 */
async function showTenants(api: Api, session: Session | null) {
  const options = session?.tenants.map((t) => el("option", { value: t })) ?? [];
  if (mayReadUsage(session)) {
    const { tenants } = await api.send(api.client.api.GET("/cms/v1.0/tenants"));
    options.splice(
      0,
      options.length,
      ...tenants.map((t) => el("option", { value: t.resourceTenantId, label: tenantLabel(t) })),
    );
  }
  byId("tenant-list").replaceChildren(...options);
}

const tenantLabel = (t: TenantSummary) =>
  `${t.resourceTenantId}: ${t.resources} resource${t.resources === 1 ? "" : "s"}, ${humanBytes(t.bytes)}`;

/** Usage and the tenant list are shown to admins, to confined tokens, and with auth off (services/quotas.ts). */
const mayReadUsage = (session: Session | null) => !session || session.confined || session.admin;

async function showUsage(api: Api, tenant: string) {
  const box = byId("usage");
  const bar = byId<HTMLMeterElement>("usage-bar");
  try {
    const usage = await api.send(
      api.client.api.GET("/cms/v1.0/usage", { params: { query: { resourceTenantId: tenant } } }),
    );
    const limit = usage.limits.bytes;
    bar.max = limit ?? Math.max(usage.bytes, 1);
    bar.value = usage.bytes;
    bar.hidden = limit === null;
    byId("usage-text").textContent =
      limit === null
        ? `${humanBytes(usage.bytes)} (no quota)`
        : `${humanBytes(usage.bytes)} of ${humanBytes(limit)} (${Math.round((usage.bytes / limit) * 100)} %)`;
    box.hidden = false;
  } catch {
    box.hidden = true; // a confined user may not read usage: the rest of the page still works
  }
}

async function main() {
  const settings = JSON.parse(byId("library-settings").textContent ?? "{}") as Settings;
  const session: Session | null = settings.tenantClaim
    ? await waitForSession(settings.tenantClaim, settings.roles)
    : null;
  const api = createApi(settings.apiPrefix, () => session?.accessToken ?? null);

  const tenantInput = byId<HTMLInputElement>("tenant");
  const authorInput = byId<HTMLInputElement>("author");
  const allowed = session?.tenants ?? [];
  const remembered = localStorage.getItem(TENANT_KEY);
  tenantInput.value =
    remembered && (allowed.length === 0 || allowed.includes(remembered)) ? remembered : (allowed[0] ?? "");
  authorInput.value = localStorage.getItem(AUTHOR_KEY) ?? session?.user ?? "";
  authorInput.addEventListener("change", () => localStorage.setItem(AUTHOR_KEY, authorInput.value));

  const tenant = () => tenantInput.value.trim();
  const author = () => authorInput.value.trim();
  const listTenants = () => showTenants(api, session).catch((err: Error) => showError(`Tenants: ${err.message}`));
  const refresh = () => {
    void browser.reload();
    void folders.reload();
    if (mayReadUsage(session)) void showUsage(api, tenant());
    void listTenants(); // counts and sizes change with every upload and delete
  };
  const details = createDetails(api, { author, changed: refresh, previewPreset: settings.previewPreset });
  const filters = createFilters(
    () => void browser.reload(),
    (path) => folders.mark(path),
  );
  const folders = createFolderTree(api, tenant, (path) => filters.setFolder(path));
  const selection = createBulk(api, { author, changed: refresh, name: nameOf });
  const browser = createBrowser(api, {
    tenant,
    open: (resource) => void details.open(resource),
    filters,
    selection,
    previewPreset: settings.previewPreset,
    addTag: (tag) => filters.addTag(tag),
  });
  bindUploads(api, { tenant, author, done: refresh });

  byId<HTMLFormElement>("tenant-form").addEventListener("submit", (event) => {
    event.preventDefault();
    clearError();
    localStorage.setItem(TENANT_KEY, tenant());
    refresh();
  });
  await showResumable();
  if (tenant()) refresh();
  else await listTenants();
  document.body.dataset.ready = "true"; // for tests and scripts: the page is wired
}

main().catch((err: Error) => showError(`The library could not start: ${err.message}`));
