/**
 * Uploads: one list item per file with a progress bar and a Cancel button. A new file of
 * DIRECT_UPLOAD_MIN_BYTES or more goes straight to storage (direct-upload.ts) where the server
 * offers it; everything else, new versions included, through tus (tus-js-client). tus-js-client keeps each unfinished upload's URL in
 * localStorage under the file's fingerprint (name, type, size, modification time, endpoint; a new
 * version's also names its resource), so after a reload choosing the same file again continues
 * where it stopped instead of starting over.
 */
import { type DetailedError, defaultOptions, Upload } from "tus-js-client";
import type { Api } from "./api.js";
import { DIRECT_UPLOAD_MIN_BYTES, directUpload, problemDetail } from "./direct-upload.js";
import { byId, el, showError } from "./dom.js";
import { humanBytes } from "./format.js";

export const CHUNK_BYTES = 4 * 1024 * 1024;

export interface UploadContext {
  tenant(): string;
  author(): string;
  /** Called after each upload that became a resource. */
  done(): void;
}

export interface TusOptions {
  /** The list (#uploads, #version-uploads) the upload's progress item goes to. */
  list: string;
  /** Upload-Metadata: the createResource fields, or a new version's lock proof. */
  metadata: Record<string, string>;
  /** Set for a new version: keeps its resumable upload apart from a new upload of the same file. */
  resourceUID?: string;
}

function item(list: string, file: File) {
  const progress = el("progress", { max: String(file.size || 1), value: "0", "aria-label": `Upload of ${file.name}` });
  const status = el("span", { class: "status" }, "starting");
  const cancel = el("button", { type: "button" }, `Cancel ${file.name}`);
  const li = el("li", {}, el("span", {}, file.name), progress, status, cancel);
  byId(list).append(li);
  return { progress, status, cancel, li };
}

/** A refused upload's reason as the server put it (the problem's detail), else tus-js-client's message. */
function reasonOf(error: Error): string {
  return problemDetail((error as DetailedError).originalResponse?.getBody()) ?? error.message;
}

/** Sends `file` through tus; resolves true when it arrived whole, false when the user cancelled it. */
export async function tusUpload(api: Api, file: File, options: TusOptions): Promise<boolean> {
  const view = item(options.list, file);
  const { resourceUID } = options;
  return new Promise<boolean>((resolve, reject) => {
    const upload = new Upload(file, {
      // Absolute: tus-js-client resolves the Location it is given against it.
      endpoint: new URL(`${api.prefix}/uploads`, location.href).href,
      chunkSize: CHUNK_BYTES,
      retryDelays: [0, 1000, 3000],
      metadata: options.metadata,
      ...(resourceUID
        ? {
            fingerprint: async (f: File, o: { endpoint?: string | null }) =>
              ["tus-br-version", resourceUID, f.name, f.type, f.size, f.lastModified, o.endpoint].join("-"),
          }
        : {}),
      removeFingerprintOnSuccess: true,
      // The token may have been renewed since the upload began: read it per request.
      onBeforeRequest(req) {
        for (const [name, value] of Object.entries(api.headers())) req.setHeader(name, value);
      },
      onProgress(sent, total) {
        view.progress.value = sent;
        view.status.textContent = `${humanBytes(sent)} of ${humanBytes(total)}`;
      },
      onSuccess() {
        view.status.textContent = "done";
        view.cancel.remove();
        void showResumable();
        resolve(true);
      },
      onError(error) {
        view.status.textContent = "failed";
        view.cancel.remove();
        reject(new Error(reasonOf(error)));
      },
    });
    view.cancel.addEventListener("click", async () => {
      view.cancel.disabled = true;
      // Terminate (tus DELETE): the server drops the stored bytes; the fingerprint goes too.
      await upload.abort(true).catch(() => {});
      view.status.textContent = "cancelled";
      void showResumable();
      resolve(false);
    });
    upload
      .findPreviousUploads()
      .then((previous) => {
        const last = previous[0];
        if (last) {
          view.status.textContent = "resuming";
          upload.resumeFromPreviousUpload(last);
        }
        upload.start();
      })
      .catch(reject);
  });
}

export async function uploadFile(api: Api, file: File, context: UploadContext): Promise<void> {
  const tenant = context.tenant();
  if (!tenant) {
    showError("Choose a tenant before uploading.");
    return;
  }
  const metadata = {
    resourceTenantId: tenant,
    resourceName: file.name,
    // The browser's type is a guess from the name: sent as filetype, the server checks it against the bytes.
    ...(file.type ? { filetype: file.type } : {}),
    resourceAuthor: context.author() || "unknown",
  };
  try {
    // null: not tried (small file) or not offered, so through tus.
    const direct = file.size >= DIRECT_UPLOAD_MIN_BYTES ? await straightToStorage(api, file, metadata) : null;
    if (await (direct ?? tusUpload(api, file, { list: "uploads", metadata }))) context.done();
  } catch (err) {
    showError(`Upload of ${file.name} failed: ${(err as Error).message}`);
  }
}

/**
 * `file` through an upload URL, with the same progress item as tus; resolves false when the user
 * cancelled it, null (its item removed) when the server offers no upload URLs.
 */
async function straightToStorage(
  api: Api,
  file: File,
  metadata: { resourceTenantId: string; resourceName: string; resourceAuthor: string; filetype?: string },
): Promise<boolean | null> {
  const view = item("uploads", file);
  const abort = new AbortController();
  view.cancel.addEventListener("click", () => {
    view.cancel.disabled = true;
    abort.abort();
  });
  try {
    const { filetype, ...fields } = metadata;
    const outcome = await directUpload(
      api,
      file,
      { ...fields, ...(filetype ? { resourceMediaType: filetype } : {}) },
      view,
      abort.signal,
    );
    if (outcome === "unavailable") {
      view.li.remove();
      return null;
    }
    view.status.textContent = "done";
    return true;
  } catch (err) {
    if (!abort.signal.aborted) {
      view.status.textContent = "failed";
      throw err;
    }
    view.status.textContent = "cancelled";
    return false;
  } finally {
    view.cancel.remove();
  }
}

/** Lists the uploads a previous page left unfinished (from tus-js-client's storage). */
export async function showResumable() {
  const box = byId("resumable");
  const uploads = await defaultOptions.urlStorage.findAllUploads().catch(() => []);
  const names = uploads.map((u) => u.metadata?.resourceName ?? u.metadata?.filename).filter(Boolean);
  box.hidden = names.length === 0;
  box.textContent = names.length
    ? `Unfinished uploads: ${names.join(", ")}. Choose the same file again to resume where it stopped.`
    : "";
}

/** The file picker and the drop zone both start uploads. */
export function bindUploads(api: Api, context: UploadContext) {
  const input = byId<HTMLInputElement>("file-input");
  const zone = byId("drop-zone");
  const start = (files: FileList | null) => {
    for (const file of files ?? []) void uploadFile(api, file, context);
  };
  input.addEventListener("change", () => {
    start(input.files);
    input.value = "";
  });
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    start(event.dataTransfer?.files ?? null);
  });
}
