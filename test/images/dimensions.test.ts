/**
 * Resource JSON carries a raster image's `width` and `height`, read from its header at ingest
 * (issue 30): on every way in (createResource inline, uploadResource, a tus upload, a zip package's
 * files, updateResource with new content) and every way out (the answers, queryResource,
 * listResources); absent, not null, for anything else. One real app (libSQL file, blobs on disk).
 */
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { API, form, type ResourceDto, upload, useCmsApp } from "../helpers/cms-client.js";
import { buildZip } from "../helpers/zip-writer.js";

type Sized = ResourceDto & { width?: number; height?: number };
const sizeOf = (r: Sized) => ({ width: r.width, height: r.height });

describe("image width and height at ingest", () => {
  const t = useCmsApp("dims", {}, { transport: "in-process" });
  const solid = (width: number, height: number) =>
    sharp({ create: { width, height, channels: 3, background: "#c33" } });

  it("create, upload, query and list carry them; a non-image has none (absent, not null)", async () => {
    // Stored 60 × 40 with EXIF orientation 6: displayed (and transformed) 40 × 60.
    const jpeg = await solid(60, 40).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const photo = (await t.cms.create({ resourceName: "p.jpg", resourceMediaType: "image/jpeg" }, jpeg)) as Sized;
    expect(sizeOf(photo)).toEqual({ width: 40, height: 60 });

    const png = await solid(123, 45).png().toBuffer();
    const res = await upload(
      t.app,
      form(
        { resourceAuthor: "A", resourceTenantId: "dims", resourceMediaType: "image/png" },
        { bytes: png, name: "u.png", type: "image/png" },
      ),
    );
    expect(res.status, await res.clone().text()).toBe(201);
    const uploaded = (await res.json()) as Sized;
    expect(sizeOf(uploaded)).toEqual({ width: 123, height: 45 });

    const text = await t.cms.create({ resourceName: "a.txt", resourceMediaType: "text/plain" }, "hello");
    expect(text).not.toHaveProperty("width");
    expect(text).not.toHaveProperty("height");

    const queried = (await (await t.cms.post("queryResource", { queryUID: uploaded.resourceUID })).json()) as Sized;
    expect(sizeOf(queried)).toEqual({ width: 123, height: 45 });
    const page = (await (await t.cms.get(`listResources?tenant=dims`)).json()) as { resources: Sized[] };
    const listed = new Map(page.resources.map((r) => [r.resourceUID, r]));
    expect(sizeOf(listed.get(photo.resourceUID)!)).toEqual({ width: 40, height: 60 });
    expect(listed.get(text.resourceUID)).not.toHaveProperty("width");
  });

  it("updateResource with new content reads them again (or drops them); a name change keeps them", async () => {
    const made = (await t.cms.create(
      { resourceName: "u.webp", resourceMediaType: "image/webp" },
      await solid(30, 20).webp().toBuffer(),
    )) as Sized;
    expect(sizeOf(made)).toEqual({ width: 30, height: 20 });
    const lock = await t.cms.lock(made.resourceUID);
    const update = async (fields: Record<string, unknown>) => {
      const res = await t.cms.post("updateResource", { ...lock, ...fields });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as Sized;
    };
    const gif = await solid(7, 9).gif().toBuffer();
    expect(sizeOf(await update({ resourceBinary: gif.toString("base64") }))).toEqual({ width: 7, height: 9 });
    expect(sizeOf(await update({ resourceName: "renamed.gif" }))).toEqual({ width: 7, height: 9 });
    const plain = await update({ resourceBinary: Buffer.from("not an image").toString("base64") });
    expect(plain).not.toHaveProperty("width");
  });

  it("a tus upload's resource and a zip package's image files carry them", async () => {
    const avif = await solid(64, 48).avif({ effort: 0 }).toBuffer();
    const meta = Object.entries({ resourceTenantId: "dims", filename: "t.avif", filetype: "image/avif", author: "A" })
      .map(([k, v]) => `${k} ${Buffer.from(v).toString("base64")}`)
      .join(",");
    const created = await t.app.fetch(t.app.url(`${API}/uploads`), {
      method: "POST",
      headers: {
        "tus-resumable": "1.0.0",
        "upload-length": String(avif.length),
        "upload-metadata": meta,
        "content-type": "application/offset+octet-stream",
      },
      body: new Uint8Array(avif),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const finished = (await created.json()) as Sized;
    expect(sizeOf(finished)).toEqual({ width: 64, height: 48 });

    const zip = await buildZip([
      { name: "info.json", data: JSON.stringify({ startpage: "index.html" }) },
      { name: "index.html", data: "<img src=a.png>" },
      { name: "a.png", data: new Uint8Array(await solid(5, 6).png().toBuffer()) },
    ]);
    const pkg = (await t.cms.create({ resourceName: "site.zip", resourceMediaType: "application/zip" }, zip)) as Sized;
    expect(pkg).not.toHaveProperty("width"); // the start page
    const image = pkg.resourcesList?.find((r) => r.resourceURI.endsWith("/a.png")) as Sized;
    expect(sizeOf(image)).toEqual({ width: 5, height: 6 });
  });

  it("the OpenAPI Resource schema describes them as optional integers", async () => {
    const doc = (await (await t.app.fetch(t.app.url("/openapi.json"))).json()) as {
      components: { schemas: Record<string, { properties: Record<string, { type: string }>; required?: string[] }> };
    };
    for (const name of ["Resource", "ResourceItem"]) {
      const schema = doc.components.schemas[name]!;
      expect(schema.properties.width?.type).toBe("integer");
      expect(schema.properties.height?.type).toBe("integer");
      expect(schema.required).not.toContain("width");
    }
  });
});
