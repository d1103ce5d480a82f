/**
 * The details dialog's Description form: title, alt text, description, tags, folder and metadata
 * (JSON), saved through updateResourceMetadata as a JSON Merge Patch of what changed, with
 * `If-Match: "<metadataVersion>"` of what the form shows. Its errors show in the form's own alert,
 * beside the Save button where the user is (the dialog's is above the fold); a 412 (someone saved
 * meanwhile) with a Reload action, the edits staying in the fields until then.
 */
import type { Api } from "./api.js";
import { ApiError } from "./api.js";
import { byId, clearError } from "./dom.js";
import { heldLock } from "./locks.js";
import type { Resource } from "./types.js";

type Json = Record<string, unknown>;
type Patch = Parameters<Api["client"]["updateResourceMetadata"]>[1];

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The merge patch (RFC 7396) that turns `before` into `after`: removed keys as null, nested objects
 * patched key by key, anything else replaced. (A null value cannot be stored through a merge patch.)
 */
export function replacingPatch(before: Json, after: Json): Json {
  const patch: Json = {};
  for (const key of Object.keys(before)) if (!Object.hasOwn(after, key)) patch[key] = null;
  for (const [key, value] of Object.entries(after)) {
    const old = before[key];
    if (isObject(old) && isObject(value)) {
      const inner = replacingPatch(old, value);
      if (Object.keys(inner).length > 0) patch[key] = inner;
    } else if (!Object.hasOwn(before, key) || JSON.stringify(old) !== JSON.stringify(value)) patch[key] = value;
  }
  return patch;
}

const fold = (tag: string) => tag.toLocaleLowerCase();

/** Comma-separated tags, trimmed, the first spelling of each kept (tags match case-insensitively). */
export function parseTags(text: string): string[] {
  const tags: string[] = [];
  for (const raw of text.split(",")) {
    const tag = raw.trim();
    if (tag && !tags.some((t) => fold(t) === fold(tag))) tags.push(tag);
  }
  return tags;
}

/** `tags` with `remove` taken out and `add` put in (case-insensitively). */
export function tagsAfter(tags: string[], add: string[], remove: string[]): string[] {
  const removed = new Set(remove.map(fold));
  const kept = tags.filter((t) => !removed.has(fold(t)));
  for (const tag of add) if (!kept.some((t) => fold(t) === fold(tag))) kept.push(tag);
  return kept;
}

/** A folder as typed (`photos/2026`) as the API writes it (`/photos/2026/`); empty or `/` is unset (null). */
export function normaliseFolder(text: string): string | null {
  const trimmed = text.trim();
  if (trimmed === "" || trimmed === "/") return null;
  return `${trimmed.startsWith("/") ? "" : "/"}${trimmed}${trimmed.endsWith("/") ? "" : "/"}`;
}

const text = (id: string) => byId<HTMLInputElement | HTMLTextAreaElement>(id);
const orNull = (value: string) => (value.trim() === "" ? null : value);

export interface DescribeForm {
  /** Shows `resource`'s description (the fields, the version edits are made against). */
  fill(resource: Resource): void;
  /** Only a caller who may modify the resource can edit: the fields are read-only otherwise. */
  allow(modify: boolean): void;
}

export function createDescribeForm(api: Api, saved: (resource: Resource) => void): DescribeForm {
  const form = byId<HTMLFormElement>("describe");
  const fields = byId<HTMLFieldSetElement>("describe-fields");
  const save = byId<HTMLButtonElement>("describe-save");
  const reload = byId<HTMLButtonElement>("describe-reload");
  const status = byId("describe-status");
  const showError = (message: string) => {
    byId("describe-error").textContent = message;
  };
  let shown: Resource | null = null;

  function fill(resource: Resource) {
    shown = resource;
    text("d-title").value = resource.title ?? "";
    text("d-alt").value = resource.altText ?? "";
    text("d-description").value = resource.description ?? "";
    text("d-tags").value = resource.tags.join(", ");
    text("d-folder").value = resource.folder;
    text("d-metadata").value = JSON.stringify(resource.metadata, null, 2);
    reload.hidden = true;
    status.textContent = "";
  }

  /** What the form changes of `resource`, or a message saying why it cannot be sent. */
  function patchOf(resource: Resource): Patch | string {
    let metadata: unknown;
    try {
      metadata = JSON.parse(text("d-metadata").value.trim() || "{}");
    } catch (err) {
      return `Metadata is not JSON: ${(err as Error).message}`;
    }
    if (!isObject(metadata)) return "Metadata must be a JSON object ({…}).";
    const patch: Json = {};
    const title = orNull(text("d-title").value);
    const altText = orNull(text("d-alt").value);
    const description = orNull(text("d-description").value);
    if (title !== resource.title) patch.title = title;
    if (altText !== resource.altText) patch.altText = altText;
    if (description !== resource.description) patch.description = description;
    const tags = parseTags(text("d-tags").value);
    if (JSON.stringify(tags) !== JSON.stringify(resource.tags)) patch.tags = tags.length ? tags : null;
    const folder = normaliseFolder(text("d-folder").value);
    if ((folder ?? "/") !== resource.folder) patch.folder = folder;
    const metadataPatch = replacingPatch(resource.metadata, metadata);
    if (Object.keys(metadataPatch).length > 0) patch.metadata = metadataPatch;
    return patch as Patch;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const resource = shown;
    if (!resource) return;
    clearError();
    status.textContent = "";
    const patch = patchOf(resource);
    if (typeof patch === "string") {
      showError(patch);
      return;
    }
    if (Object.keys(patch).length === 0) {
      status.textContent = "Nothing changed.";
      return;
    }
    save.disabled = true;
    try {
      const lockID = heldLock(resource.resourceUID)?.lockID;
      const fresh = await api.call(
        api.client.updateResourceMetadata(resource.resourceUID, patch, {
          ifMatch: resource.metadataVersion,
          ...(lockID ? { lockID } : {}),
        }),
      );
      fill(fresh);
      status.textContent = "Saved.";
      saved(fresh);
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) {
        showError(
          "Not saved: this description was changed meanwhile (by someone else, or in another tab). Reload it to see the current one; your edits stay in the fields until then.",
        );
        reload.hidden = false;
        reload.focus();
      } else showError(`Not saved: ${(err as Error).message}`);
    } finally {
      save.disabled = false;
    }
  });

  reload.addEventListener("click", async () => {
    if (!shown) return;
    clearError();
    try {
      const fresh = await api.call(api.client.queryResource(shown.resourceUID));
      fill(fresh as Resource);
      status.textContent = "Reloaded: the current description is shown.";
      saved(fresh as Resource);
    } catch (err) {
      showError(`Reload failed: ${(err as Error).message}`);
    }
  });

  return {
    fill,
    allow(modify) {
      fields.disabled = !modify;
      save.hidden = !modify;
    },
  };
}
