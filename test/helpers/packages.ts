/**
 * Zip packages the tests build themselves: a SCORM one, an info.json one shaped like the anchor's
 * demo_content.zip (§3.9), and one with neither.
 */
import { buildZip } from "./zip-writer.js";

export const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4, 5]);

export const manifest = (href: string) => `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="pkg" xmlns="http://www.imsglobal.org/xsd/imscp_v1p1" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_v1p3">
  <organizations default="org"><organization identifier="org"><item identifier="i1" identifierref="r1"><title>Lesson</title></item></organization></organizations>
  <resources>
    <resource identifier="r1" type="webcontent" adlcp:scormType="sco" href="${href}"><file href="${href}"/></resource>
  </resources>
</manifest>`;

/** SCORM: the manifest names index.html, which links to images/logo.png and js/app.js. */
export const scormZip = () =>
  buildZip([
    { name: "imsmanifest.xml", data: manifest("index.html") },
    { name: "index.html", data: '<html><img src="images/logo.png"><script src="js/app.js"></script></html>' },
    { name: "images/", data: "" },
    { name: "images/logo.png", data: PNG, method: 0 },
    { name: "js/app.js", data: "console.log('lesson');" },
  ]);

/** Like the anchor's demo_content.zip: info.json (start.html) wins over a manifest naming a missing index.html. */
export const infoJsonZip = () =>
  buildZip([
    { name: "images/", data: "" },
    { name: "images/logo.png", data: PNG },
    { name: "imsmanifest.xml", data: manifest("index.html") },
    {
      name: "info.json",
      data: JSON.stringify({ content_uid: "12345qwerty", startpage: "start.html", totalpages: "1" }),
    },
    { name: "start.html", data: "<html>start</html>" },
  ]);

export const plainZip = () =>
  buildZip([
    { name: "readme.txt", data: "no start page here" },
    { name: "index.html", data: "<html></html>" },
  ]);
