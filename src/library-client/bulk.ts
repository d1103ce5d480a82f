/**
 * Bulk actions on the resources selected on the page shown (a checkbox each, in the table or the
 * grid, and "Select all on this page"): tag (+add -remove), move to a folder, delete. One resource at
 * a time, each asked first what the caller may do with it (resourceAccess, as the details dialog
 * does): one it may not change, or locked by someone else, is reported and not tried. Every failure
 * is listed by name with its reason; the resources that failed stay selected.
 */
import type { Api } from "./api.js";
import { confirmAction } from "./confirm.js";
import { byId, clearError, el } from "./dom.js";
import { heldLock, underLock } from "./locks.js";
import { normaliseFolder, tagsAfter } from "./describe.js";
import type { Resource } from "./types.js";

export interface Selection {
  /** A checkbox that selects `resource` (the table's and the grid's show the same state). */
  checkbox(resource: Resource): HTMLInputElement;
  /** The resources of the page now shown: the selection keeps those of them it had. */
  page(resources: Resource[]): void;
}

export interface BulkContext {
  author(): string;
  /** After a bulk action: the list and the folder tree are drawn again. */
  changed(): void;
  name(resource: Resource): string;
}

/** `+a -b c` → tags to add (a, c) and to remove (b). */
export function parseTagEdits(text: string): { add: string[]; remove: string[] } {
  const add: string[] = [];
  const remove: string[] = [];
  for (const word of text.split(/[\s,]+/)) {
    if (word.startsWith("-") && word.length > 1) remove.push(word.slice(1));
    else if (word.startsWith("+") && word.length > 1) add.push(word.slice(1));
    else if (word && word !== "+" && word !== "-") add.push(word);
  }
  return { add, remove };
}

export function createBulk(api: Api, context: BulkContext): Selection {
  const selected = new Map<string, Resource>();
  let onPage: Resource[] = [];
  const all = byId<HTMLInputElement>("select-page");
  const count = byId("selected-count");
  const results = byId("bulk-results");
  const buttons = ["bulk-tag", "bulk-move", "bulk-delete"].map((id) => byId<HTMLButtonElement>(id));

  function sync() {
    for (const box of document.querySelectorAll<HTMLInputElement>("input[data-select]")) {
      box.checked = selected.has(box.dataset.select ?? "");
    }
    all.checked = onPage.length > 0 && selected.size === onPage.length;
    all.indeterminate = selected.size > 0 && selected.size < onPage.length;
    count.textContent = `${selected.size} selected`;
    for (const button of buttons) button.disabled = selected.size === 0;
  }

  all.addEventListener("change", () => {
    selected.clear();
    if (all.checked) for (const r of onPage) selected.set(r.resourceUID, r);
    sync();
  });

  /**
   * Runs `change` on each selected resource the caller may change; lists each failure by name.
   * `verb` names what was done in the summary ("Tagged 3 of 4").
   */
  async function each(verb: string, change: (resource: Resource, lockID: string | undefined) => Promise<unknown>) {
    clearError();
    const chosen = [...selected.values()];
    const failed: Resource[] = [];
    const lines: HTMLLIElement[] = [];
    for (const resource of chosen) {
      const reason = await refusal(resource).catch((err: Error) => err.message);
      const error =
        reason ??
        (await change(resource, heldLock(resource.resourceUID)?.lockID).then(
          () => null,
          (err: Error) => err.message,
        ));
      if (error === null) continue;
      failed.push(resource);
      lines.push(el("li", { class: "failed" }, `${context.name(resource)}: ${error}`));
    }
    results.replaceChildren(el("li", {}, `${verb} ${chosen.length - failed.length} of ${chosen.length}.`), ...lines);
    selected.clear();
    for (const r of failed) selected.set(r.resourceUID, r);
    context.changed();
  }

  /** Why the caller may not change `resource` (its rights, another's lock), or null. */
  async function refusal(resource: Resource): Promise<string | null> {
    const access = await api.send(
      api.client.api.GET("/cms/v1.0/resourceAccess/{resourceUID}", {
        params: { path: { resourceUID: resource.resourceUID } },
      }),
    );
    if (!access.may.modify) return "you may not change it";
    if (access.lock && !heldLock(resource.resourceUID)) return `locked by ${access.lock.lockOwner}`;
    return null;
  }

  const describe = (
    resource: Resource,
    patch: Parameters<Api["client"]["updateResourceMetadata"]>[1],
    lockID?: string,
  ) =>
    api.call(
      api.client.updateResourceMetadata(resource.resourceUID, patch, {
        ifMatch: resource.metadataVersion,
        ...(lockID ? { lockID } : {}),
      }),
    );

  byId("bulk-tag").addEventListener("click", () => {
    const edits = parseTagEdits(byId<HTMLInputElement>("bulk-tags").value);
    if (edits.add.length + edits.remove.length === 0) {
      results.replaceChildren(el("li", {}, "Name the tags to add (+tag) or remove (-tag)."));
      return;
    }
    void each("Tagged", (resource, lockID) =>
      describe(resource, { tags: tagsAfter(resource.tags, edits.add, edits.remove) }, lockID),
    );
  });

  byId("bulk-move").addEventListener("click", () => {
    const folder = normaliseFolder(byId<HTMLInputElement>("bulk-folder").value);
    void each("Moved", (resource, lockID) => describe(resource, { folder }, lockID));
  });

  byId("bulk-delete").addEventListener("click", async () => {
    const n = selected.size;
    if (!(await confirmAction(`Delete ${n} resource${n === 1 ? "" : "s"}? An admin can still purge them.`))) return;
    void each("Deleted", (resource) =>
      underLock(
        api,
        resource.resourceUID,
        context.author() || "library",
        (held) => api.call(api.client.deleteResource({ resourceUID: resource.resourceUID, ...held })),
        { release: false },
      ),
    );
  });

  sync();
  return {
    checkbox(resource) {
      const box = el("input", {
        type: "checkbox",
        "data-select": resource.resourceUID,
        "aria-label": `Select ${context.name(resource)}`,
      });
      box.checked = selected.has(resource.resourceUID);
      box.addEventListener("change", () => {
        if (box.checked) selected.set(resource.resourceUID, resource);
        else selected.delete(resource.resourceUID);
        sync();
      });
      return box;
    },
    page(resources) {
      onPage = resources;
      const kept = new Set(resources.map((r) => r.resourceUID));
      for (const uid of [...selected.keys()]) if (!kept.has(uid)) selected.delete(uid);
      // The page's fresh copies (their metadataVersion) replace the ones selected before.
      for (const r of resources) if (selected.has(r.resourceUID)) selected.set(r.resourceUID, r);
      queueMicrotask(sync);
    },
  };
}
