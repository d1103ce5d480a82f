/**
 * The resource list: one page at a time, as a table or as a thumbnail grid (the View switch), paged
 * by the API's cursors. Without a search, tag or folder it is listResources with the form's filters
 * (name prefix, author, media type family, order); with one, searchResources (full text, tags, folder,
 * media type, order by creation or, with text, by relevance).
 */
import type { Api } from "./api.js";
import type { Selection } from "./bulk.js";
import { byId, el, showError } from "./dom.js";
import { type Filters, findingParameters, listOrder, type SortChoice } from "./filters.js";
import { humanBytes, humanDate, nameOf } from "./format.js";
import type { ListResourcesQuery, SearchQuery } from "../client/index.js";
import { card } from "./thumbs.js";
import type { Resource } from "./types.js";

export interface Browser {
  /** Shows the first page for the tenant (again): after a change of tenant, filters or content. */
  reload(): Promise<void>;
}

export interface BrowseContext {
  tenant(): string;
  open(resource: Resource): void;
  filters: Filters;
  selection: Selection;
  /** The image preset thumbnails load (settings.previewPreset). */
  previewPreset: string | null;
  addTag(tag: string): void;
}

function listQuery(tenant: string, cursor: string | null): ListResourcesQuery {
  const params: Record<string, string> = {
    tenant,
    order: listOrder(byId<HTMLSelectElement>("sort").value as SortChoice),
  };
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

function searchQuery(tenant: string, filters: Filters, cursor: string | null): SearchQuery {
  const type = byId<HTMLSelectElement>("type-filter").value;
  return {
    tenant,
    limit: Number(byId<HTMLSelectElement>("page-size").value),
    ...findingParameters(filters.current(), byId<HTMLSelectElement>("sort").value as SortChoice),
    ...(type ? { mediaType: type } : {}),
    ...(cursor ? { cursor } : {}),
  } as SearchQuery;
}

function row(resource: Resource, context: BrowseContext): HTMLTableRowElement {
  const name = nameOf(resource);
  const button = el("button", { type: "button", "data-uid": resource.resourceUID }, name);
  button.addEventListener("click", () => context.open(resource));
  const title = resource.title ? el("div", { class: "title" }, resource.title) : "";
  const chips = resource.tags.map((tag) => {
    const chip = el("button", { type: "button", class: "chip", "aria-label": `Filter by tag ${tag}` }, tag);
    chip.addEventListener("click", () => context.addTag(tag));
    return chip;
  });
  return el(
    "tr",
    { "data-uid": resource.resourceUID },
    el("td", {}, context.selection.checkbox(resource)),
    el("td", { class: "name" }, button, title),
    el("td", { class: "tags" }, ...chips),
    el("td", {}, resource.mediaType),
    el("td", {}, humanBytes(resource.size)),
    el("td", {}, resource.author),
    el("td", {}, el("time", { datetime: resource.createdAt }, humanDate(resource.createdAt))),
  );
}

const GRID_KEY = "cms.library.view";

export function createBrowser(api: Api, context: BrowseContext): Browser {
  const table = byId<HTMLTableElement>("resources");
  const body = table.querySelector("tbody") as HTMLTableSectionElement;
  const grid = byId("grid");
  const caption = byId("resources-caption");
  const first = byId<HTMLButtonElement>("first-page");
  const next = byId<HTMLButtonElement>("next-page");
  const listButton = byId("view-list");
  const gridButton = byId("view-grid");
  let page = 1;
  let nextCursor: string | null = null;
  let latest = 0;
  let shown: Resource[] = [];
  let gridView = localStorage.getItem(GRID_KEY) === "grid";

  function draw() {
    listButton.setAttribute("aria-pressed", String(!gridView));
    gridButton.setAttribute("aria-pressed", String(gridView));
    // The caption names the page in either view (the grid is labelled by it); the table's rows go with the table.
    table.querySelector("thead")?.toggleAttribute("hidden", gridView);
    body.hidden = gridView;
    grid.hidden = !gridView;
    if (gridView) {
      body.replaceChildren();
      grid.replaceChildren(
        ...shown.map((r) =>
          card(r, {
            api,
            preset: context.previewPreset,
            open: context.open,
            checkbox: context.selection.checkbox,
            name: nameOf,
          }),
        ),
      );
    } else {
      grid.replaceChildren();
      body.replaceChildren(...shown.map((r) => row(r, context)));
    }
  }

  async function show(cursor: string | null) {
    const name = context.tenant();
    if (!name) return;
    const ticket = ++latest;
    try {
      const searching = context.filters.searching();
      const result = searching
        ? await api.call(api.client.searchResources(searchQuery(name, context.filters, cursor)))
        : await api.call(api.client.listResources(listQuery(name, cursor)));
      if (ticket !== latest) return; // a newer listing was asked for meanwhile
      shown = "items" in result ? result.items : result.resources;
      nextCursor = result.nextCursor;
      context.selection.page(shown);
      draw();
      const count = shown.length;
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

  for (const [button, grid] of [
    [listButton, false],
    [gridButton, true],
  ] as const) {
    button.addEventListener("click", () => {
      gridView = grid;
      localStorage.setItem(GRID_KEY, grid ? "grid" : "list");
      draw();
    });
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
    const target = event.target;
    if (target instanceof HTMLSelectElement || (target instanceof HTMLInputElement && target.type === "checkbox"))
      void reload();
    else typing = setTimeout(() => void reload(), 250);
  });
  return { reload };
}
