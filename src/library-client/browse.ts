/**
 * The resource table: one page of listResources at a time with the filters of the search form
 * (name prefix, author, media type family, order), paged by the API's cursors.
 */
import type { Api } from "./api.js";
import { byId, el, showError } from "./dom.js";
import { humanBytes, humanDate } from "./format.js";
import type { ListResourcesQuery } from "../client/index.js";
import type { Resource } from "./types.js";

export interface Browser {
  /** Shows the first page for the tenant (again): after a change of tenant, filters or content. */
  reload(): Promise<void>;
}

function query(tenant: string, cursor: string | null): ListResourcesQuery {
  const params: Record<string, string> = { tenant, order: byId<HTMLSelectElement>("sort").value };
  params.limit = byId<HTMLSelectElement>("page-size").value;
  const name = byId<HTMLInputElement>("search").value;
  const author = byId<HTMLInputElement>("author-filter").value.trim();
  const type = byId<HTMLSelectElement>("type-filter").value;
  if (name) params.namePrefix = name;
  if (author) params.author = author;
  if (type) params.mediaType = type;
  if (cursor) params.cursor = cursor;
  // The form's values as sent: the server checks them (order and limit come from its own <select>s).
  return params as unknown as ListResourcesQuery;
}

function row(resource: Resource, open: (r: Resource) => void): HTMLTableRowElement {
  const name = resource.resourceURI.slice(resource.resourceURI.indexOf("/") + 1);
  const button = el("button", { type: "button", "data-uid": resource.resourceUID }, name);
  button.addEventListener("click", () => open(resource));
  return el(
    "tr",
    {},
    el("td", {}, button),
    el("td", {}, resource.mediaType),
    el("td", {}, humanBytes(resource.size)),
    el("td", {}, resource.author),
    el("td", {}, el("time", { datetime: resource.createdAt }, humanDate(resource.createdAt))),
  );
}

export function createBrowser(api: Api, tenant: () => string, open: (r: Resource) => void): Browser {
  const body = byId("resources").querySelector("tbody") as HTMLTableSectionElement;
  const caption = byId("resources-caption");
  const first = byId<HTMLButtonElement>("first-page");
  const next = byId<HTMLButtonElement>("next-page");
  let page = 1;
  let nextCursor: string | null = null;
  let latest = 0;

  async function show(cursor: string | null) {
    const name = tenant();
    if (!name) return;
    const ticket = ++latest;
    try {
      const result = await api.call(api.client.listResources(query(name, cursor)));
      if (ticket !== latest) return; // a newer listing was asked for meanwhile
      body.replaceChildren(...result.resources.map((r) => row(r, open)));
      nextCursor = result.nextCursor;
      const count = result.resources.length;
      caption.textContent =
        count === 0 && page === 1
          ? `No resources in ${name} match.`
          : `Resources of ${name}, page ${page} (${count} shown${nextCursor ? ", more on the next page" : ""}).`;
      first.disabled = page === 1;
      next.disabled = nextCursor === null;
    } catch (err) {
      showError(`Listing failed: ${(err as Error).message}`);
    }
  }

  next.addEventListener("click", () => {
    page++;
    void show(nextCursor);
  });
  const reload = () => {
    page = 1;
    return show(null);
  };
  first.addEventListener("click", () => void reload());
  // Filters apply as they change; typing is debounced so each keystroke is not a request.
  let typing: ReturnType<typeof setTimeout> | undefined;
  const form = byId<HTMLFormElement>("filters");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void reload();
  });
  form.addEventListener("input", (event) => {
    clearTimeout(typing);
    if (event.target instanceof HTMLSelectElement) void reload();
    else typing = setTimeout(() => void reload(), 250);
  });
  return { reload };
}
