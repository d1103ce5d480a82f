/**
 * The details dialog of one resource: preview, facts (size, type, SHA-256, dates, author, lock),
 * its description (describe.ts: title, alt text, tags, folder, metadata),
 * a signed link with a chosen expiry, lock/unlock, a new version, revisions with downloads, and
 * delete/purge after a confirmation.
 */
import type { Api } from "./api.js";
import { confirmAction } from "./confirm.js";
import { createDescribeForm } from "./describe.js";
import { byId, clearError, el, showError } from "./dom.js";
import { humanBytes, humanDate, nameOf } from "./format.js";
import { forget, heldLock, lock, underLock, unlock } from "./locks.js";
import { renderPreview, signedLink } from "./preview.js";
import type { Lock, Resource, ResourceAccess, Revision } from "./types.js";
import { tusUpload } from "./upload.js";

export interface DetailsContext {
  author(): string;
  /** After a change the table must show (a new version, a delete). */
  changed(): void;
  /** The image preset previews load, or null (settings.previewPreset). */
  previewPreset: string | null;
}

function fact(term: string, ...value: (Node | string)[]) {
  return [el("dt", {}, term), el("dd", {}, ...value)];
}

function lockText(live: Lock | null, uid: string): string {
  if (!live) return "not locked";
  const mine = heldLock(uid) ? " (by you, in this browser)" : "";
  return `locked by ${live.lockOwner}${mine} until ${humanDate(live.lockExpiration)}`;
}

/** The actions the caller's roles and ownership open (resourceAccess): the others are not offered. */
function offer(may: ResourceAccess["may"]) {
  for (const id of ["lock-toggle", "delete"]) byId(id).hidden = !may.modify;
  // The file input and its label (the control people see and reach) go together: a label-less input would be a trap.
  byId("version-input").hidden = !may.modify;
  (byId("version-input").nextElementSibling as HTMLElement).hidden = !may.modify;
  byId("purge").hidden = !may.purge;
}

export function createDetails(api: Api, context: DetailsContext) {
  const dialog = byId<HTMLDialogElement>("details");
  const lockButton = byId<HTMLButtonElement>("lock-toggle");
  const output = byId<HTMLOutputElement>("link-output");
  let current: Resource | null = null;
  let live: Lock | null = null;
  const describe = createDescribeForm(api, (fresh) => {
    if (current?.resourceUID === fresh.resourceUID) current = fresh;
    context.changed();
  });

  async function refreshFacts(resource: Resource, revisions: Revision[]) {
    const access = await api.send(
      api.client.api.GET("/cms/v1.0/resourceAccess/{resourceUID}", {
        params: { path: { resourceUID: resource.resourceUID } },
      }),
    );
    live = access.lock;
    offer(access.may);
    describe.allow(access.may.modify);
    // A lock this browser remembers but that is gone (expired, released elsewhere) or another's is forgotten.
    // (An anonymous caller is not told the lockID even of its own lock: then the remembered one stands.)
    const held = heldLock(resource.resourceUID);
    if (held && (!live || (live.lockID !== null && live.lockID !== held.lockID))) forget(resource.resourceUID);
    const updated = revisions.at(-1)?.createdAt ?? resource.createdAt;
    byId("facts").replaceChildren(
      ...fact("Type", resource.mediaType),
      ...fact("Size", `${humanBytes(resource.size)} (${resource.size} bytes)`),
      ...fact("SHA-256", el("code", {}, resource.sha256)),
      ...fact("Created", humanDate(resource.createdAt)),
      ...fact("Updated", humanDate(updated)),
      ...fact("Author", resource.author),
      ...fact("Lock", lockText(live, resource.resourceUID)),
      ...fact("UID", el("code", {}, resource.resourceUID)),
    );
    lockButton.textContent = heldLock(resource.resourceUID) ? "Unlock" : "Lock";
    lockButton.disabled = Boolean(live && !heldLock(resource.resourceUID));
  }

  function revisionItem(resource: Resource, revision: Revision) {
    const download = el("button", { type: "button" }, `Download revision ${revision.revision}`);
    download.addEventListener("click", () => void downloadRevision(resource, revision));
    const text = `${revision.action} by ${revision.author}, ${humanDate(revision.createdAt)}, ${revision.resourceName}, ${humanBytes(revision.size)} `;
    return el("li", {}, text, revision.action === "delete" ? "" : download);
  }

  async function downloadRevision(resource: Resource, revision: Revision) {
    try {
      const res = await api.fetch(`getRevisionData/${encodeURIComponent(resource.resourceUID)}/${revision.revision}`);
      const url = URL.createObjectURL(await res.blob());
      const link = el("a", { href: url, download: revision.resourceName });
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (err) {
      showError(`Download failed: ${(err as Error).message}`);
    }
  }

  async function show(resource: Resource) {
    current = resource;
    // Nothing of the resource shown before may stand while this one loads.
    for (const id of ["preview", "facts", "revisions"]) byId(id).replaceChildren();
    // Nothing is offered until the caller's rights are known.
    offer({ modify: false, purge: false });
    describe.allow(false);
    describe.fill(resource);
    const name = nameOf(resource);
    byId("details-title").textContent = name;
    output.textContent = "";
    const [revisions, preview] = await Promise.all([
      api
        .send(
          api.client.api.GET("/cms/v1.0/getRevisions/{resourceUID}", {
            params: { path: { resourceUID: resource.resourceUID } },
          }),
        )
        .then((list) => list.revisions),
      renderPreview(api, resource, name, context.previewPreset).catch((err: Error) =>
        el("p", {}, `No preview: ${err.message}`),
      ),
    ]);
    byId("preview").replaceChildren(preview);
    byId("revisions").replaceChildren(...revisions.map((r) => revisionItem(resource, r)));
    await refreshFacts(resource, revisions);
  }

  /** Runs an action of the dialog; its failure is shown, not thrown. */
  const act = (action: (resource: Resource) => Promise<void>) => async () => {
    if (!current) return;
    clearError();
    try {
      await action(current);
    } catch (err) {
      showError((err as Error).message);
    }
  };

  byId("details-close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => byId("preview").replaceChildren()); // stop playing media

  byId("copy-link").addEventListener(
    "click",
    act(async (resource) => {
      const seconds = Number(byId<HTMLSelectElement>("link-expiry").value);
      const url = await signedLink(api, resource, seconds);
      output.textContent = url;
      await navigator.clipboard?.writeText(url).then(
        () => (output.textContent = `Copied: ${url}`),
        () => {}, // no clipboard permission: the link is shown to copy by hand
      );
    }),
  );

  lockButton.addEventListener(
    "click",
    act(async (resource) => {
      if (heldLock(resource.resourceUID)) await unlock(api, resource.resourceUID);
      else await lock(api, resource.resourceUID, context.author() || "library");
      await show(resource);
    }),
  );

  const versionInput = byId<HTMLInputElement>("version-input");
  versionInput.addEventListener(
    "change",
    act(async (resource) => {
      const file = versionInput.files?.[0];
      versionInput.value = "";
      if (!file) return;
      // Resumable and of any size, as a new upload: tus with the lock's proof (updateResource takes content inline only).
      const arrived = await underLock(api, resource.resourceUID, context.author() || "library", (held) =>
        tusUpload(api, file, {
          list: "version-uploads",
          resourceUID: resource.resourceUID,
          metadata: {
            resourceUID: resource.resourceUID,
            lockID: held.lockID,
            author: held.author,
            filename: file.name, // shown in the list of unfinished uploads; the server keeps the resource's name
            ...(file.type ? { resourceMediaType: file.type } : {}),
          },
        }),
      );
      if (!arrived) return;
      const fresh = await api.call(api.client.queryResource(resource.resourceUID));
      context.changed();
      await show(fresh);
    }),
  );

  byId("delete").addEventListener(
    "click",
    act(async (resource) => {
      if (!(await confirmAction(`Delete ${nameOf(resource)}? It is no longer served; an admin can still purge it.`)))
        return;
      await underLock(
        api,
        resource.resourceUID,
        context.author() || "library",
        (held) => api.call(api.client.deleteResource({ resourceUID: resource.resourceUID, ...held })),
        { release: false },
      );
      dialog.close();
      context.changed();
    }),
  );

  byId("purge").addEventListener(
    "click",
    act(async (resource) => {
      if (!(await confirmAction(`Purge ${nameOf(resource)} for good? Its content and every revision are removed.`)))
        return;
      await api.send(api.client.api.POST("/cms/v1.0/purgeResource", { body: { resourceUID: resource.resourceUID } }));
      forget(resource.resourceUID);
      dialog.close();
      context.changed();
    }),
  );

  return {
    async open(resource: Resource) {
      clearError();
      byId("version-uploads").replaceChildren(); // another resource's (a new version's stays shown after it)
      dialog.showModal();
      await show(resource).catch((err: Error) => showError(err.message));
    },
  };
}
