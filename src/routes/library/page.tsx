/**
 * The media library page, rendered on the server with hono/jsx: the markup only; everything it
 * does is /library/library.js (src/library-client/). No inline script runs (the settings are JSON in
 * a non-executable <script>), the one inline stylesheet is allowed by its hash.
 */
import { renderDetached } from "../../lib/render-detached.js";
import type { ExplorerAuth } from "../explorer/page.js";
import { hashSource, originSource, pageCsp, safeJson } from "../page-policy.js";
import { STYLE } from "./style.js";

/** What the browser script is told (the #library-settings JSON). */
export interface LibrarySettings {
  apiPrefix: string;
  /** Present when auth is on: /explorer.js runs the login, the script reads the tenants from this claim. */
  tenantClaim: string | null;
  maxLinkSeconds: number;
  /** The image preset previews load (a display-size derivative), or null when this runtime cannot transform. */
  previewPreset: string | null;
  /**
   * Where the token's roles are (auth on): this server's client roles, and realm roles when counted
   * (CMS_AUTH_REALM_ROLES). The page only asks for what the roles allow (an admin's tenant list),
   * so a refusal never lands in the console; the server still decides.
   */
  roles: { clientId: string; realmRoles: boolean } | null;
}

export interface LibraryPageOptions {
  settings: LibrarySettings;
  auth: ExplorerAuth | null;
  /** Origins besides 'self' the previews load from (the signed links' origin). */
  contentOrigins: string[];
  /** The bucket's origin where upload URLs point (S3/R2); none when they are on this service. */
  uploadOrigins?: readonly string[];
}

/**
 * Scripts from this origin only; previews (img, media, frames) from this origin and the content
 * origin; requests to this origin, the provider's token endpoint and the bucket large files are
 * sent to; never framed itself.
 */
function libraryCsp({ auth, contentOrigins, uploadOrigins }: LibraryPageOptions): string {
  const content = ["'self'", ...contentOrigins.map(originSource)].join(" ");
  return pageCsp({
    script: "'self'",
    style: hashSource(STYLE),
    img: `${content} data:`,
    media: content,
    frame: content,
    tokenUrl: auth?.tokenUrl ?? null,
    connect: uploadOrigins,
  });
}

const TYPE_FILTERS: [string, string][] = [
  ["", "All types"],
  ["image/*", "Images"],
  ["video/*", "Video"],
  ["audio/*", "Audio"],
  ["application/pdf", "PDF"],
  ["text/*", "Text"],
];

const EXPIRIES: [number, string][] = [
  [3600, "1 hour"],
  [86400, "1 day"],
  [604800, "7 days"],
  [300, "5 minutes"],
];

function Page({ settings, auth }: LibraryPageOptions) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Media library — Content resource service</title>
        {/* No icon: without this the browser asks for /favicon.ico, and its 404 is a console error. */}
        <link rel="icon" href="data:," />
        <style dangerouslySetInnerHTML={{ __html: STYLE }} />
      </head>
      <body>
        <header>
          <h1>Media library</h1>
          <div id="cms-session">
            <span id="cms-user" />
            <button id="cms-logout" type="button">
              Log out
            </button>
          </div>
          <a href="/docs">API explorer</a>
        </header>
        <div id="cms-error" role="alert" aria-live="assertive" />
        <main>
          <section aria-label="Tenant" class="bar">
            <form id="tenant-form">
              <label for="tenant">Tenant</label>
              <input id="tenant" name="tenant" list="tenant-list" required autocomplete="off" />
              <datalist id="tenant-list" />
              <button type="submit">Open</button>
            </form>
            <div id="usage" hidden>
              <label for="usage-bar">Storage used</label>
              <meter id="usage-bar" min="0" max="1" value="0" />
              <span id="usage-text" />
            </div>
          </section>

          <section aria-labelledby="upload-heading" id="upload-section">
            <h2 id="upload-heading">Add files</h2>
            <div id="drop-zone">
              <p>Drop files here, or</p>
              <input id="file-input" type="file" multiple class="visually-hidden" />
              <label for="file-input" class="button">
                Upload
              </label>
              <label for="author">Author</label>
              <input id="author" autocomplete="name" />
            </div>
            <p id="resumable" hidden />
            <ul id="uploads" aria-label="Uploads" />
          </section>

          <section aria-labelledby="browse-heading">
            <h2 id="browse-heading">Resources</h2>
            <form id="filters" role="search" aria-label="Filter resources">
              <label for="q">Search</label>
              <input id="q" type="search" autocomplete="off" maxlength={200} aria-describedby="q-hint" />
              <label for="search">Name starts with</label>
              <input id="search" type="search" autocomplete="off" />
              <label for="author-filter">Author</label>
              <input id="author-filter" autocomplete="off" />
              <label for="type-filter">Type</label>
              <select id="type-filter">
                {TYPE_FILTERS.map(([value, label]) => (
                  <option value={value}>{label}</option>
                ))}
              </select>
              <label for="sort">Sort</label>
              <select id="sort">
                <option value="desc">Newest first</option>
                <option value="asc">Oldest first</option>
                <option value="relevance" id="sort-relevance">
                  Relevance (with a search)
                </option>
              </select>
              <label for="page-size">Per page</label>
              <select id="page-size">
                <option value="25">25</option>
                <option value="50">50</option>
                <option value="100">100</option>
              </select>
              <span class="check">
                <input id="recursive" type="checkbox" checked />
                <label for="recursive">Include subfolders</label>
              </span>
            </form>
            <p id="q-hint" class="hint">
              Search finds whole words in names, titles, descriptions, alt text and tags (sun* for a prefix, "a
              phrase" in quotes). With a search, a tag or a folder chosen, name and author do not apply.
            </p>
            <div id="active-filters" aria-label="Active filters" role="group" />
            <div class="browse-layout">
              <nav aria-labelledby="folders-heading" id="folders">
                <h3 id="folders-heading">Folders</h3>
                <button type="button" id="all-folders" aria-pressed="true">
                  All folders
                </button>
                <button type="button" id="top-level" aria-pressed="false">
                  Top level only
                </button>
                <ul id="folder-tree" />
              </nav>
              <div>
                <div class="actions" id="view-switch" role="group" aria-label="View">
                  <button type="button" id="view-list" aria-pressed="true">
                    List
                  </button>
                  <button type="button" id="view-grid" aria-pressed="false">
                    Thumbnails
                  </button>
                </div>
                <div id="bulk" class="actions" role="group" aria-label="Selected resources">
                  <span class="check">
                    <input id="select-page" type="checkbox" />
                    <label for="select-page">Select all on this page</label>
                  </span>
                  <output id="selected-count">0 selected</output>
                  <label for="bulk-tags">Tags (+add -remove)</label>
                  <input id="bulk-tags" autocomplete="off" />
                  <button type="button" id="bulk-tag">
                    Tag selected
                  </button>
                  <label for="bulk-folder">Move to folder</label>
                  <input id="bulk-folder" autocomplete="off" placeholder="/photos/" />
                  <button type="button" id="bulk-move">
                    Move selected
                  </button>
                  <button type="button" id="bulk-delete" class="danger">
                    Delete selected
                  </button>
                </div>
                <ul id="bulk-results" aria-label="Results of the last bulk action" aria-live="polite" />
                <table id="resources">
                  <caption id="resources-caption">Choose a tenant to see its resources.</caption>
                  <thead>
                    <tr>
                      <th scope="col">
                        <span class="visually-hidden">Select</span>
                      </th>
                      <th scope="col">Name</th>
                      <th scope="col">Tags</th>
                      <th scope="col">Type</th>
                      <th scope="col">Size</th>
                      <th scope="col">Author</th>
                      <th scope="col">Created</th>
                    </tr>
                  </thead>
                  <tbody />
                </table>
                <ul id="grid" aria-labelledby="resources-caption" hidden />
                <nav aria-label="Pages" class="pager">
                  <button id="first-page" type="button" disabled>
                    First page
                  </button>
                  <button id="next-page" type="button" disabled>
                    Next page
                  </button>
                </nav>
              </div>
            </div>
          </section>
        </main>

        <dialog id="details" aria-labelledby="details-title">
          <div class="dialog-head">
            <h2 id="details-title">Resource</h2>
            <button type="button" id="details-close">
              Close
            </button>
          </div>
          <p id="details-error" class="dialog-error" role="alert" aria-live="assertive" />
          <div id="preview" aria-label="Preview" role="region" />
          <dl id="facts" />
          <form id="describe" aria-labelledby="describe-heading">
            <h3 id="describe-heading">Description</h3>
            <fieldset id="describe-fields">
              <legend class="visually-hidden">Title, alt text, tags, folder and metadata</legend>
              <label for="d-title">Title</label>
              <input id="d-title" maxlength={200} autocomplete="off" />
              <label for="d-alt">Alt text</label>
              <textarea id="d-alt" rows={2} maxlength={1000} />
              <label for="d-description">Description</label>
              <textarea id="d-description" rows={2} maxlength={2000} />
              <label for="d-tags">Tags (comma-separated)</label>
              <input id="d-tags" autocomplete="off" />
              <label for="d-folder">Folder</label>
              <input id="d-folder" autocomplete="off" placeholder="/" />
              <label for="d-metadata">Metadata (a JSON object)</label>
              <textarea id="d-metadata" rows={4} spellcheck={false} />
            </fieldset>
            <p id="describe-error" class="dialog-error" role="alert" aria-live="assertive" />
            <div class="actions">
              <button type="submit" id="describe-save">
                Save description
              </button>
              <button type="button" id="describe-reload" hidden>
                Reload the current description
              </button>
              <output id="describe-status" />
            </div>
          </form>
          <div class="actions">
            <label for="link-expiry">Link expires in</label>
            <select id="link-expiry">
              {EXPIRIES.map(([seconds, label]) => (
                <option value={String(seconds)}>{label}</option>
              ))}
            </select>
            <button type="button" id="copy-link">
              Copy signed link
            </button>
            <output id="link-output" for="copy-link" />
          </div>
          <div class="actions">
            <button type="button" id="lock-toggle">
              Lock
            </button>
            <input id="version-input" type="file" class="visually-hidden" />
            <label for="version-input" class="button">
              Upload a new version
            </label>
            <button type="button" id="delete" class="danger">
              Delete
            </button>
            <button type="button" id="purge" class="danger">
              Purge
            </button>
          </div>
          <ul id="version-uploads" aria-label="New version uploads" />
          <h3>Revisions</h3>
          <ol id="revisions" />
        </dialog>

        <dialog id="confirm" aria-labelledby="confirm-text">
          <p id="confirm-text" />
          <div class="actions">
            <button type="button" id="confirm-cancel">
              Cancel
            </button>
            <button type="button" id="confirm-ok" class="danger">
              Confirm
            </button>
          </div>
        </dialog>

        <script id="explorer-settings" type="application/json" dangerouslySetInnerHTML={{ __html: safeJson({ auth }) }} />
        <script id="library-settings" type="application/json" dangerouslySetInnerHTML={{ __html: safeJson(settings) }} />
        {auth ? <script src="/explorer.js" /> : null}
        <script src="/library/library.js" />
      </body>
    </html>
  );
}

/** The page's HTML (rendered once: it depends on the configuration only) and its CSP. */
export function libraryPage(options: LibraryPageOptions): { html: string; csp: string } {
  return { html: `<!doctype html>${renderDetached(Page(options))}`, csp: libraryCsp(options) };
}
