/**
 * What the resource list is narrowed by besides the form's own fields: the full-text search box
 * (`q`), tag filters (chips: a tag in the list adds one, its chip's button removes it) and the folder
 * chosen in the tree (with "Include subfolders"). Any of them makes the list a searchResources query.
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
            chip(`folder: ${folder}`, `Remove folder filter ${folder}`, () => {
              folder = null;
              update();
            }),
          ]),
    );
    // Name prefix and author are listResources' filters: searchResources has none, so they rest meanwhile.
    const resting = searching();
    for (const id of ["search", "author-filter"]) byId<HTMLInputElement>(id).disabled = resting;
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
