/**
 * The folder tree beside the list: GET /folders, one level at a time (a folder's children load when
 * it is opened), each with its count of resources. Choosing a folder filters the list to it (and
 * below it with "Include subfolders"); "All folders" lifts that filter; "Top level only" shows the
 * resources directly in `/`. Opened folders stay open
 * when the tree is drawn again after a change.
 */
import type { Api } from "./api.js";
import { byId, el, showError } from "./dom.js";

export interface FolderTree {
  /** Draws the tree of the tenant afresh (after a change of tenant or of any resource's folder). */
  reload(): Promise<void>;
  /** Marks the chosen folder (null: all). */
  mark(path: string | null): void;
}

interface FolderEntry {
  path: string;
  resources: number;
  folders: number;
}

const lastSegment = (path: string) => path.slice(0, -1).slice(path.slice(0, -1).lastIndexOf("/") + 1);

export function createFolderTree(api: Api, tenant: () => string, choose: (path: string | null) => void): FolderTree {
  const root = byId("folder-tree");
  const all = byId<HTMLButtonElement>("all-folders");
  const topLevel = byId<HTMLButtonElement>("top-level");
  const opened = new Set<string>();
  let chosen: string | null = null;
  let drawing = 0;

  all.addEventListener("click", () => choose(null));
  topLevel.addEventListener("click", () => choose("/"));

  async function children(parent: string): Promise<FolderEntry[]> {
    const { folders } = await api.call(api.client.folders(tenant(), parent));
    return folders;
  }

  function mark(path: string | null) {
    chosen = path;
    all.setAttribute("aria-pressed", String(path === null));
    topLevel.setAttribute("aria-pressed", String(path === "/"));
    for (const button of root.querySelectorAll<HTMLButtonElement>("button[data-path]")) {
      button.setAttribute("aria-pressed", String(button.dataset.path === path));
    }
  }

  function node(entry: FolderEntry, ticket: number): HTMLLIElement {
    const pick = el(
      "button",
      { type: "button", "data-path": entry.path, "aria-pressed": String(entry.path === chosen) },
      `${lastSegment(entry.path)} (${entry.resources})`,
    );
    pick.addEventListener("click", () => choose(entry.path));
    const list = el("ul", { hidden: true });
    const item = el("li", {});
    if (entry.folders > 0) {
      const twisty = el(
        "button",
        { type: "button", class: "twisty", "aria-expanded": "false", "aria-label": `Subfolders of ${entry.path}` },
        "▸",
      );
      const open = async (show: boolean) => {
        twisty.setAttribute("aria-expanded", String(show));
        twisty.textContent = show ? "▾" : "▸";
        list.hidden = !show;
        if (!show) {
          opened.delete(entry.path);
          return;
        }
        opened.add(entry.path);
        if (list.childElementCount === 0) await fill(list, entry.path, ticket);
      };
      twisty.addEventListener("click", () => void open(twisty.getAttribute("aria-expanded") !== "true"));
      item.append(twisty, pick, list);
      if (opened.has(entry.path)) void open(true);
    } else item.append(el("span", { class: "twisty", "aria-hidden": "true" }), pick);
    return item;
  }

  async function fill(list: HTMLElement, parent: string, ticket: number) {
    try {
      const entries = await children(parent);
      if (ticket !== drawing) return; // a newer drawing started meanwhile
      list.replaceChildren(...entries.map((entry) => node(entry, ticket)));
    } catch (err) {
      showError(`Folders: ${(err as Error).message}`);
    }
  }

  return {
    async reload() {
      if (!tenant()) return;
      await fill(root, "/", ++drawing);
    },
    mark,
  };
}
