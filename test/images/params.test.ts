import { describe, expect, it } from "vitest";
import { derivativeName, type ImageSettings, outputFormat, parseImageQuery } from "../../src/images/params.js";
import { domainProblem } from "../../src/http/domain-problems.js";
import { ImageError } from "../../src/images/errors.js";

const settings: ImageSettings = {
  presets: { thumb: { width: 64, height: 64, fit: "cover", format: "webp" } },
  presetsOnly: false,
  maxDimension: 6000,
};
const q = (query: Record<string, string>) => (name: string) => query[name];

function refusal(query: Record<string, string>, s: ImageSettings = settings) {
  try {
    parseImageQuery(q(query), s);
  } catch (err) {
    // images/ knows nothing of HTTP: its coded error becomes the problem at the edge.
    expect(err).toBeInstanceOf(ImageError);
    const problem = domainProblem(err)!;
    return { status: problem.status, pointer: problem.errors?.[0]?.pointer };
  }
  throw new Error("not refused");
}

describe("image parameters", () => {
  it("no image parameter is a plain getData", () => {
    expect(parseImageQuery(q({ v: "abc" }), settings)).toBeNull();
  });

  it("width alone keeps the aspect ratio; both with no fit mean cover", () => {
    expect(parseImageQuery(q({ width: "320" }), settings)).toEqual({
      width: 320,
      height: undefined,
      fit: "inside",
      format: "auto",
      quality: undefined,
    });
    expect(parseImageQuery(q({ width: "320", height: "200" }), settings)?.fit).toBe("cover");
    expect(parseImageQuery(q({ width: "320", height: "200", fit: "fill" }), settings)?.fit).toBe("fill");
  });

  it("bad or out-of-range values are 400s naming the parameter", () => {
    expect(refusal({ width: "0" })).toEqual({ status: 400, pointer: "/query/width" });
    expect(refusal({ width: "6001" })).toEqual({ status: 400, pointer: "/query/width" });
    expect(refusal({ height: "12px" })).toEqual({ status: 400, pointer: "/query/height" });
    expect(refusal({ width: "1e3" })).toEqual({ status: 400, pointer: "/query/width" });
    expect(refusal({ fit: "stretch" })).toEqual({ status: 400, pointer: "/query/fit" });
    expect(refusal({ format: "gif" })).toEqual({ status: 400, pointer: "/query/format" });
    expect(refusal({ quality: "101" })).toEqual({ status: 400, pointer: "/query/quality" });
    expect(refusal({ preset: "huge" })).toEqual({ status: 400, pointer: "/query/preset" });
    expect(refusal({ preset: "__proto__" })).toEqual({ status: 400, pointer: "/query/preset" });
  });

  it("presets apply; CMS_IMAGE_PRESETS_ONLY refuses anything else", () => {
    expect(parseImageQuery(q({ preset: "thumb" }), settings)).toMatchObject({ width: 64, height: 64, format: "webp" });
    const only = { ...settings, presetsOnly: true };
    expect(parseImageQuery(q({ preset: "thumb" }), only)).toMatchObject({ width: 64 });
    expect(refusal({ preset: "thumb", width: "2000" }, only)).toEqual({ status: 400, pointer: "/query/width" });
  });

  it("format=auto picks AVIF or WebP from Accept, else the source's format", () => {
    const auto = parseImageQuery(q({ width: "10" }), settings)!;
    expect(outputFormat(auto, "image/avif,image/webp,*/*", "jpeg")).toBe("avif");
    expect(outputFormat(auto, "image/avif;q=0, image/webp", "jpeg")).toBe("webp");
    expect(outputFormat(auto, "image/*", "png")).toBe("png");
    expect(outputFormat(auto, "", "jpeg")).toBe("jpeg");
    expect(derivativeName(auto, "webp")).toBe("w10-h0-inside-q0.webp");
  });

  it("format=auto honours Accept's q-values: the higher of AVIF and WebP, q=0 refused", () => {
    const auto = parseImageQuery(q({ width: "10" }), settings)!;
    expect(outputFormat(auto, "image/webp, image/avif;q=0.001", "jpeg")).toBe("webp");
    expect(outputFormat(auto, "image/avif;q=0.5, image/webp;q=0.9", "jpeg")).toBe("webp");
    expect(outputFormat(auto, "image/avif;q=0.5, image/webp;q=0.5", "jpeg")).toBe("avif"); // a tie: AVIF
    expect(outputFormat(auto, "image/avif; q=0.000, image/webp;q=0", "png")).toBe("png");
    expect(outputFormat(auto, "image/webp;q=0, image/webp", "jpeg")).toBe("jpeg"); // the first naming it counts
  });

  it("enlarge=true lets a derivative outgrow its source (its own key); anything but true|false is a 400", () => {
    expect(parseImageQuery(q({ width: "10" }), settings)?.enlarge).toBeUndefined();
    const up = parseImageQuery(q({ width: "10", enlarge: "true" }), settings)!;
    expect(up.enlarge).toBe(true);
    expect(derivativeName(up, "png")).toBe("w10-h0-inside-q0-up.png");
    expect(parseImageQuery(q({ width: "10", enlarge: "false" }), settings)?.enlarge).toBeUndefined();
    expect(refusal({ width: "10", enlarge: "1" })).toEqual({ status: 400, pointer: "/query/enlarge" });
    const presets = { ...settings, presets: { big: { width: 900, enlarge: true } } };
    expect(parseImageQuery(q({ preset: "big" }), presets)?.enlarge).toBe(true);
  });

  it("a signed link's holder may name presets only: any other image parameter is a 403 naming it", () => {
    const link = { linkHolder: true };
    expect(parseImageQuery(q({ preset: "thumb" }), settings, link)).toMatchObject({ width: 64 });
    for (const name of ["width", "height", "fit", "format", "quality", "enlarge"]) {
      try {
        parseImageQuery(q({ preset: "thumb", [name]: "1" }), settings, link);
        throw new Error(`${name} accepted`);
      } catch (err) {
        expect(domainProblem(err)?.status).toBe(403);
        expect(domainProblem(err)?.errors?.[0]?.pointer).toBe(`/query/${name}`);
      }
    }
  });
});
