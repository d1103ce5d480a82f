import { describe, expect, it } from "vitest";
import { domainProblem } from "../../src/http/domain-problems.js";
import { findStartPage } from "../../src/start-page/detect.js";
import { openZip, ZipError } from "../../src/zip/reader.js";
import { buildZip, memorySource, type WriterEntry } from "../helpers/zip-writer.js";

const page = (name: string): WriterEntry => ({ name, data: `<html>${name}</html>` });

async function startPage(entries: WriterEntry[]): Promise<string> {
  const zip = await openZip(memorySource(await buildZip(entries)));
  return findStartPage(zip);
}

async function expectStartPageError(entries: WriterEntry[], message: RegExp): Promise<void> {
  const err: unknown = await startPage(entries).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ZipError);
  const zipError = err as ZipError;
  expect(domainProblem(zipError)?.status).toBe(400);
  expect(domainProblem(zipError)?.code).toBe("VALIDATION_FAILED");
  expect(zipError.code).toBe("ZIP_NO_START_PAGE");
  expect(zipError.reason).toBe("start-page");
  expect(zipError.message).toMatch(message);
}

const manifest = (body: string, head = `<?xml version="1.0" encoding="UTF-8"?>`): WriterEntry => ({
  name: "imsmanifest.xml",
  data: `${head}\n${body}`,
});

const SCORM_12 = `
<manifest identifier="course" version="1.2" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="ORG-1">
    <organization identifier="ORG-1">
      <title>Course</title>
      <item identifier="ITEM-1" identifierref="RES-LESSON" isvisible="true"><title>Lesson 1</title></item>
      <item identifier="ITEM-2" identifierref="RES-OTHER"><title>Lesson 2</title></item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="RES-ASSETS" type="webcontent" adlcp:scormtype="asset" href="shared/style.css"/>
    <resource identifier="RES-OTHER" type="webcontent" adlcp:scormtype="sco" href="other.html"/>
    <resource identifier="RES-LESSON" type="webcontent" adlcp:scormtype="sco" href="lessons/one.html">
      <file href="lessons/one.html"/>
    </resource>
  </resources>
</manifest>`;

const SCORM_2004 = `
<manifest identifier="course2004" version="1" xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_v1p3" xmlns:imsss="http://www.imsglobal.org/xsd/imsss">
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="MAIN">
    <organization identifier="ALT"><title>Alternative</title>
      <item identifier="A1" identifierref="R-ALT"><title>Alt</title></item>
    </organization>
    <organization identifier="MAIN" adlseq:objectivesGlobalToSystem="false"><title>Main</title>
      <item identifier="MODULE"><title>Module (no resource)</title>
        <item identifier="M1" identifierref="R-MAIN"><title>Start</title></item>
      </item>
    </organization>
  </organizations>
  <resources xml:base="content/">
    <resource identifier="R-ALT" type="webcontent" adlcp:scormType="sco" href="alt.html"/>
    <resource identifier="R-MAIN" type="webcontent" adlcp:scormType="sco" xml:base="main/" href="index.html?mode=launch#top"/>
  </resources>
</manifest>`;

describe("findStartPage: info.json", () => {
  it("uses startpage", async () => {
    expect(
      await startPage([
        { name: "info.json", data: `{"content_uid":"1","startpage":"start.html","totalpages":"1"}` },
        page("start.html"),
      ]),
    ).toBe("start.html");
  });

  it("uses startPage, and prefers startpage when both are present", async () => {
    expect(
      await startPage([{ name: "info.json", data: `{"startPage":"html/start.html"}` }, page("html/start.html")]),
    ).toBe("html/start.html");
    expect(
      await startPage([
        { name: "info.json", data: `{"startPage":"b.html","startpage":"a.html"}` },
        page("a.html"),
        page("b.html"),
      ]),
    ).toBe("a.html");
  });

  it("wins over imsmanifest.xml, even one naming a missing page (the Java demo_content.zip)", async () => {
    const entries = [
      { name: "images/", method: 0 },
      { name: "images/logo.png", data: new Uint8Array(46) },
      manifest(
        `<manifest><resources><resource identifier="r" adlcp:scormType="sco" href="index.html"/></resources></manifest>`,
      ),
      { name: "info.json", data: `{"content_uid":"12345qwerty","startpage":"start.html"}` },
      page("start.html"),
    ];
    expect(await startPage(entries)).toBe("start.html");
  });

  it("strips a query and fragment and returns the path only", async () => {
    expect(
      await startPage([{ name: "info.json", data: `{"startpage":"start.html?lang=en#intro"}` }, page("start.html")]),
    ).toBe("start.html");
  });

  it("prefers a literal file name containing '?' or '#' over the stripped form", async () => {
    expect(
      await startPage([{ name: "info.json", data: `{"startpage":"a#b.html"}` }, page("a#b.html"), page("a")]),
    ).toBe("a#b.html");
  });

  it("matches names across Unicode normalisation forms and returns the entry's own path", async () => {
    const nfd = "cafe\u0301.html";
    expect(await startPage([{ name: "info.json", data: `{"startpage":"caf\u00e9.html"}` }, page(nfd)])).toBe(nfd);
  });

  it("refuses a start page that is not in the zip, or is a directory", async () => {
    await expectStartPageError(
      [{ name: "info.json", data: `{"startpage":"missing.html"}` }, page("start.html")],
      /"missing.html" is not a file in the zip/,
    );
    await expectStartPageError(
      [{ name: "info.json", data: `{"startpage":"html"}` }, page("html/index.html")],
      /not a file in the zip/,
    );
    await expectStartPageError(
      [{ name: "info.json", data: `{"startpage":"../start.html"}` }, page("start.html")],
      /not a file in the zip/,
    );
  });

  it("refuses invalid info.json and non-string start pages", async () => {
    await expectStartPageError([{ name: "info.json", data: `{"startpage": ` }, page("start.html")], /not valid JSON/);
    await expectStartPageError(
      [{ name: "info.json", data: `["start.html"]` }, page("start.html")],
      /not a JSON object/,
    );
    await expectStartPageError(
      [{ name: "info.json", data: `{"startpage": 42}` }, page("start.html")],
      /non-empty string/,
    );
    await expectStartPageError(
      [{ name: "info.json", data: `{"startpage": "  "}` }, page("start.html")],
      /non-empty string/,
    );
  });

  it("falls back to imsmanifest.xml when info.json names no start page", async () => {
    expect(
      await startPage([{ name: "info.json", data: `{"title":"x"}` }, manifest(SCORM_12), page("lessons/one.html")]),
    ).toBe("lessons/one.html");
    await expectStartPageError(
      [{ name: "info.json", data: `{"title":"x"}` }, page("start.html")],
      /info.json has no "startpage" or "startPage"/,
    );
  });

  it("only looks at the root info.json", async () => {
    await expectStartPageError(
      [{ name: "sub/info.json", data: `{"startpage":"start.html"}` }, page("start.html")],
      /zip has no info.json start page or imsmanifest.xml/,
    );
  });

  it("refuses a metadata file over 1 MiB without buffering it", async () => {
    const data = `{"startpage":"start.html","pad":"${" ".repeat(1024 * 1024)}"}`;
    await expectStartPageError(
      [{ name: "info.json", data, method: 0 }, page("start.html")],
      /larger than 1048576 bytes/,
    );
  });
});

describe("findStartPage: imsmanifest.xml", () => {
  it("SCORM 1.2: the default organization's first item's resource", async () => {
    expect(
      await startPage([manifest(SCORM_12), page("lessons/one.html"), page("other.html"), page("shared/style.css")]),
    ).toBe("lessons/one.html");
  });

  it("SCORM 2004: default organization (not the first), nested item, xml:base, query and fragment", async () => {
    expect(await startPage([manifest(SCORM_2004), page("content/main/index.html"), page("content/alt.html")])).toBe(
      "content/main/index.html",
    );
  });

  it("uses the first organization when there is no default", async () => {
    const xml = SCORM_2004.replace(` default="MAIN"`, "");
    expect(await startPage([manifest(xml), page("content/main/index.html"), page("content/alt.html")])).toBe(
      "content/alt.html",
    );
  });

  it("falls back to the first SCO, then to the first resource with an href", async () => {
    const noOrganizations = `<manifest><organizations/><resources>
      <resource identifier="a" adlcp:scormtype="asset" href="asset.css"/>
      <resource identifier="b" adlcp:scormType="sco" href="sco.html"/>
    </resources></manifest>`;
    expect(await startPage([manifest(noOrganizations), page("asset.css"), page("sco.html")])).toBe("sco.html");
    const noSco = `<manifest><resources>
      <resource identifier="empty" type="webcontent"><file href="x.js"/></resource>
      <resource identifier="a" type="webcontent" href="first.html"/>
      <resource identifier="b" type="webcontent" href="second.html"/>
    </resources></manifest>`;
    expect(await startPage([manifest(noSco), page("first.html"), page("second.html"), page("x.js")])).toBe(
      "first.html",
    );
    const danglingRef = `<manifest><organizations default="o"><organization identifier="o"><item identifierref="nope"/></organization></organizations>
      <resources><resource identifier="r" adlcp:scormtype="sco" href="real.html"/></resources></manifest>`;
    expect(await startPage([manifest(danglingRef), page("real.html")])).toBe("real.html");
  });

  it("decodes percent-encoding and XML character references in hrefs", async () => {
    const xml = `<manifest><resources><resource identifier="r" href="my%20page.html?a=1&amp;b=2"/></resources></manifest>`;
    expect(await startPage([manifest(xml), page("my page.html")])).toBe("my page.html");
    const refs = `<manifest><resources><resource identifier="r" href="caf&#xE9;.html"/></resources></manifest>`;
    expect(await startPage([manifest(refs), page("café.html")])).toBe("café.html");
  });

  it("reads a UTF-16 manifest", async () => {
    const xml = `\ufeff<manifest><resources><resource identifier="r" href="utf16.html"/></resources></manifest>`;
    const data = new Uint8Array(xml.length * 2);
    for (let i = 0; i < xml.length; i++) new DataView(data.buffer).setUint16(i * 2, xml.charCodeAt(i), true);
    expect(await startPage([{ name: "imsmanifest.xml", data }, page("utf16.html")])).toBe("utf16.html");
  });

  it("refuses a manifest whose launch resource is missing, external or absent", async () => {
    const missing = `<manifest><resources><resource identifier="r" href="index.html"/></resources></manifest>`;
    await expectStartPageError(
      [manifest(missing), page("start.html")],
      /launch resource "index.html" is not a file in the zip/,
    );
    const external = `<manifest><resources><resource identifier="r" href="https://evil.example/x.html"/></resources></manifest>`;
    await expectStartPageError([manifest(external), page("x.html")], /not a file in the zip/);
    const escaping = `<manifest><resources xml:base="../../"><resource identifier="r" href="/etc/passwd"/></resources></manifest>`;
    await expectStartPageError([manifest(escaping), page("start.html")], /not a file in the zip/);
    await expectStartPageError(
      [manifest(`<manifest><resources/></manifest>`), page("start.html")],
      /names no resource with an href/,
    );
    await expectStartPageError(
      [manifest(`this is not xml at all <<<>>> &&&`), page("start.html")],
      /names no resource with an href/,
    );
  });

  it("ignores the DOCTYPE: no entity is defined or expanded, and markup inside it is not read", async () => {
    const hostile = `<!DOCTYPE manifest [
      <!ENTITY lol "lol">
      <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
      <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
      <!ENTITY xxe SYSTEM "file:///etc/passwd">
      <!ENTITY fake '<resource identifier="x" href="doctype.html"/>'>
      <!-- a comment with ] and > inside -->
    ]>`;
    const body = `<manifest><resources>
      <resource identifier="e" href="&lol3;&xxe;.html"/>
      <resource identifier="r" adlcp:scormtype="sco" href="index.html"/>
    </resources></manifest>`;
    const started = performance.now();
    expect(await startPage([manifest(body, hostile), page("index.html"), page("doctype.html")])).toBe("index.html");
    expect(performance.now() - started).toBeLessThan(2000);
    // The unexpanded reference stays literal, so it names no file.
    const onlyEntity = `<manifest><resources><resource identifier="e" href="&xxe;"/></resources></manifest>`;
    await expectStartPageError([manifest(onlyEntity, hostile), page("index.html")], /"&xxe;" is not a file in the zip/);
  });

  it("skips comments, CDATA and processing instructions", async () => {
    const xml = `<manifest><!-- <resource identifier="c" href="comment.html"/> -->
      <![CDATA[ <resource identifier="d" href="cdata.html"/> ]]><?pi <resource href="pi.html"/> ?>
      <resources><resource identifier="r" href="real.html"/></resources></manifest>`;
    expect(
      await startPage([manifest(xml), page("comment.html"), page("cdata.html"), page("pi.html"), page("real.html")]),
    ).toBe("real.html");
  });

  it("finds the manifest only at the root", async () => {
    const xml = `<manifest><resources><resource identifier="r" href="index.html"/></resources></manifest>`;
    await expectStartPageError(
      [{ name: "course/imsmanifest.xml", data: xml }, page("index.html")],
      /zip has no info.json start page or imsmanifest.xml/,
    );
  });
});

describe("findStartPage: neither", () => {
  it("refuses a zip with neither info.json nor imsmanifest.xml", async () => {
    await expectStartPageError(
      [page("index.html"), page("start.html")],
      /zip has no info.json start page or imsmanifest.xml/,
    );
    await expectStartPageError([], /zip has no info.json start page or imsmanifest.xml/);
  });
});
