/**
 * What the resource list is narrowed by besides the form's own fields: the full-text search box
 * (`q`), tag filters (chips: a tag in the list adds one, its chip's button removes it) and the folder
 * chosen in the tree (with "Include subfolders"; the top level `/` alone with "Top level only"). Any
 * of them makes the list a searchResources query, ordered by relevance when there is text and the
 * Sort field says so.
 */
import { byId, el } from "./dom.js";

export interface Finding {
  q: string;
  tags: string[];
  folder: string | null;
  recursive: boolean;
}

export interface Filters {
  current(): Finding;
  /** A search, a tag or a folder is chosen: the list comes from searchResources. */
  searching(): boolean;
  addTag(tag: string): void;
  setFolder(path: string | null): void;
}

const sameTag = (a: string, b: string) => a.toLocaleLowerCase() === b.toLocaleLowerCase();

/** The Sort field's values: listResources' orders, and relevance (offered only with search text). */
export type SortChoice = "desc" | "asc" | "relevance";

/** The parameters of searchResources for what is chosen (besides tenant, type, limit and cursor). */
export interface FindingParameters {
  q?: string;
  tag?: string[];
  folder?: string;
  recursive?: "true";
  sort: "relevance" | "createdAt" | "-createdAt";
}

/**
 * What is chosen as searchResources parameters. Relevance needs text (the API refuses it without q),
 * so without text it falls back to newest first; the top level `/` is never recursive (that would
 * be every folder: "All folders" is that).
 */
export function findingParameters(finding: Finding, sort: SortChoice): FindingParameters {
  const { q, tags, folder, recursive } = finding;
  const order = sort === "relevance" ? (q ? "relevance" : "-createdAt") : sort === "asc" ? "createdAt" : "-createdAt";
  return {
    ...(q ? { q } : {}),
    ...(tags.length ? { tag: tags } : {}),
    ...(folder === null ? {} : { folder, ...(recursive && folder !== "/" ? { recursive: "true" as const } : {}) }),
    sort: order,
  };
}

/** listResources' order for the Sort field: relevance is a search's only, so the list stays newest first. */
export const listOrder = (sort: SortChoice): "asc" | "desc" => (sort === "asc" ? "asc" : "desc");

/** `changed` runs after every change of a tag or the folder (the form's own inputs announce theirs). */
export function createFilters(changed: () => void, folderShown: (path: string | null) => void): Filters {
  const tags: string[] = [];
  let folder: string | null = null;
  const box = byId("active-filters");

  function chip(text: string, label: string, remove: () => void) {
    const button = el("button", { type: "button", class: "chip", "aria-label": label }, `${text} ×`);
    button.addEventListener("click", remove);
    return button;
  }

  function render() {
    box.replaceChildren(
      ...tags.map((tag) =>
        chip(`tag: ${tag}`, `Remove tag filter ${tag}`, () => {
          tags.splice(tags.indexOf(tag), 1);
          update();
        }),
      ),
      ...(folder === null
        ? []
        : [
            chip(
              folder === "/" ? "folder: / (top level only)" : `folder: ${folder}`,
              `Remove folder filter ${folder}`,
              () => {
                folder = null;
                update();
              },
            ),
          ]),
    );
    // Name prefix and author are listResources' filters: searchResources has none, so they rest meanwhile.
    const resting = searching();
    for (const id of ["search", "author-filter"]) byId<HTMLInputElement>(id).disabled = resting;
    // Relevance is offered while there is text to be relevant to.
    byId<HTMLOptionElement>("sort-relevance").disabled = current().q === "";
  }
  function update() {
    render();
    folderShown(folder);
    changed();
  }

  const current = (): Finding => ({
    q: byId<HTMLInputElement>("q").value.trim(),
    tags: [...tags],
    folder,
    recursive: byId<HTMLInputElement>("recursive").checked,
  });
  const searching = () => {
    const now = current();
    return now.q !== "" || now.tags.length > 0 || now.folder !== null;
  };
  byId("q").addEventListener("input", render);
  render();

  return {
    current,
    searching,
    addTag(tag) {
      if (tags.some((t) => sameTag(t, tag))) return;
      tags.push(tag);
      update();
    },
    setFolder(path) {
      folder = path;
      update();
    },
  };
}
