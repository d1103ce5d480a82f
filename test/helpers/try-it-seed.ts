/**
 * Shared by the explorer try-it specs: what a user types into an operation, and what the specs make
 * through the API rather than the explorer (in-process:
 * test/routes/explorer-try-it.test.ts; in Chromium: test/e2e/explorer-try-it-harness.ts): JSON posts
 * checked for their status, and resources in the try-it tenant.
 */
import { expect } from "vitest";
import type { TestApp } from "./test-app.js";

export type Json = Record<string, unknown>;

/** What a user types or picks in an operation's try-it (the rest is what the explorer starts with). */
export interface TryIt {
  /** Values for required parameters, by name (a required input left out keeps what it starts with). */
  params?: Record<string, string>;
  /** One of several optional parameters the operation needs one of (listResources: a tenant). */
  oneOf?: Record<string, string>;
  /** Added to the JSON body Swagger UI starts with (its required properties only). */
  json?: Json;
  /** A text/plain body. */
  text?: string;
  /** Multipart fields (the required ones). */
  form?: Record<string, string>;
  /** The file part of a multipart body, or a binary body. */
  file?: { name: string; mimeType: string; buffer: Buffer };
}

export function trySeeding(app: TestApp, tenant: string) {
  /** A JSON POST to the API; the answer's body, after checking its status. */
  async function post(path: string, body: Json, status: number): Promise<Json> {
    const res = await app.fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = (await res.json().catch(() => ({}))) as Json;
    expect(res.status, `${path}: ${JSON.stringify(answer)}`).toBe(status);
    return answer;
  }

  /** A resource in `tenant`; its UID. */
  async function create(name: string, mediaType: string, bytes: Uint8Array | string): Promise<string> {
    const made = await post(
      "/cms/v1.0/createResource",
      {
        resourceAuthor: "seed",
        resourceTenantId: tenant,
        resourceName: name,
        resourceMediaType: mediaType,
        resourceBinary: Buffer.from(bytes).toString("base64"),
      },
      201,
    );
    return made.resourceUID as string;
  }

  return { post, create };
}
