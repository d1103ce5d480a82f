/**
 * "Try it out" of the meta, resources (tus included) and webhook operations in real Chromium on the
 * explorer's defaults (explorer-try-it-harness.ts says how). tus from Swagger UI: Tus-Resumable,
 * Upload-Metadata (the createResource fields, base64) and Upload-Offset start with values that work,
 * so creating an upload needs only its length, and appending only the id and the file. The webhook's
 * receiver is a loopback origin.
 */
import { expect, it } from "vitest";
import { PNG_1x1 } from "../helpers/media-fixtures.js";
import { describeTryIt, TENANT } from "./explorer-try-it-harness.js";

const TUS = { "tus-resumable": "1.0.0" };

describeTryIt("resources", (explorer) => {
  it("runs the meta operations", async () => {
    const { expectTry } = explorer();
    await expectTry("apiVersion", {}, 200);
    await expectTry("healthz", {}, 200);
    await expectTry("readyz", {}, 200);
  });

  it("runs createResource, queryResource, listResources, createDataLink, uploadResource and getUsage", async () => {
    const { expectTry, create, origin } = explorer();
    await expectTry(
      "createResource",
      {
        json: {
          resourceAuthor: "explorer",
          resourceTenantId: TENANT,
          resourceName: "made.txt",
          resourceMediaType: "text/plain",
          resourceExternalURI: origin.put("made", "made from the explorer"),
        },
      },
      201,
    );
    const uid = await create("hello.txt", "text/plain", "hello from the explorer");
    await expectTry("queryResource", { json: { queryUID: uid } }, 200);
    await expectTry("listResources", { oneOf: { resourceTenantId: TENANT } }, 200);
    await expectTry("createDataLink", { json: { resourceURI: `${uid}/hello.txt` } }, 200);
    await expectTry(
      "uploadResource",
      {
        form: { resourceAuthor: "explorer", resourceTenantId: TENANT },
        file: { name: "upload.png", mimeType: "image/png", buffer: PNG_1x1 },
      },
      201,
    );
    await expectTry("getUsage", { params: { resourceTenantId: TENANT } }, 200);
  });

  it("runs a whole tus upload: options, create, offset, append, and terminates another", async () => {
    const { expectTry, app } = explorer();
    const bytes = Buffer.from("sent through tus");
    const options = await expectTry("tusOptions", {}, 204);
    expect(options.headers).toMatch(/tus-version: 1\.0\.0/i);
    // Only the length is typed: the protocol version and the metadata start with working values.
    const created = await expectTry("tusCreateUpload", { params: { "upload-length": String(bytes.length) } }, 201);
    const id = /location: \S*\/uploads\/([0-9a-f]{32})/i.exec(created.headers)?.[1] ?? "";
    expect(id, created.headers).not.toBe("");
    const offset = await expectTry("tusUploadOffset", { params: { id } }, 200);
    expect(offset.headers).toMatch(/upload-offset: 0\b/i);
    const appended = await expectTry(
      "tusAppend",
      { params: { id }, file: { name: "tus.txt", mimeType: "text/plain", buffer: bytes } },
      201,
    );
    expect(appended.size).toBe(bytes.length);

    // Another upload, made through the API, abandoned from the explorer.
    const res = await fetch(app.url("/cms/v1.0/uploads"), {
      method: "POST",
      headers: {
        ...TUS,
        "upload-length": "10",
        "upload-metadata": `resourceTenantId ${btoa(TENANT)},resourceName ${btoa("gone.txt")},resourceAuthor ${btoa("seed")}`,
      },
    });
    expect(res.status).toBe(201);
    const other = (res.headers.get("location") ?? "").split("/").at(-1) ?? "";
    await expectTry("tusTerminate", { params: { id: other } }, 204);
  });

  it("runs the webhook operations against a loopback receiver", async () => {
    const { expectTry, create, origin, app } = explorer();
    const hook = await expectTry("createWebhook", { json: { url: origin.url("/status/204") } }, 201);
    const id = hook.id as string;
    await expectTry("listWebhooks", {}, 200);
    // An event makes a delivery (the outbox row exists once the API has answered).
    await create("event.txt", "text/plain", "an event");
    const res = await fetch(app.url(`/cms/v1.0/webhooks/${id}/deliveries`));
    const { deliveries } = (await res.json()) as { deliveries: { id: string }[] };
    const deliveryId = deliveries[0]?.id ?? "";
    expect(deliveryId).not.toBe("");
    const listed = await expectTry("listWebhookDeliveries", { params: { id } }, 200);
    expect(JSON.stringify(listed.deliveries)).toContain(deliveryId);
    await expectTry("retryWebhookDelivery", { params: { id, deliveryId } }, 202);
    await expectTry("deleteWebhook", { params: { id } }, 204);
  });
});
