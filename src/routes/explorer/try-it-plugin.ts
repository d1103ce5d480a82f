/**
 * Browser side: a Swagger UI plugin (window.cmsTryIt, named in the page's `plugins`) for what the
 * served document cannot say.
 * - Swagger UI starts every multipart field with a generated sample ("string", or a random match of
 *   its `pattern`) and sends it: an optional field starts empty instead, and empty fields are not sent.
 * - Its response preview shows images only: video, audio and PDF answers are shown from a `blob:` URL
 *   of the bytes already fetched (never refetched: the request may have carried a token).
 */
export const TRY_IT_PLUGIN = `"use strict";
window.cmsTryIt = (system) => {
  const React = system.React;
  const h = React.createElement;
  const FORM = /^(multipart\\/|application\\/x-www-form-urlencoded)/;

  function emptyOptionalFields(Original) {
    return (props) => {
      const content = props.requestBody && props.requestBody.get("content");
      const type = props.contentType || (content && content.keySeq().first()) || "";
      const schema = content && content.getIn([type, "schema"]);
      if (!props.isExecute || !schema || !FORM.test(type)) return h(Original, props);
      const required = schema.get("required") || system.Im.List();
      let value = system.Im.Map.isMap(props.requestBodyValue) ? props.requestBodyValue : system.Im.OrderedMap();
      (schema.get("properties") || system.Im.Map()).forEach((property, name) => {
        const file = property.get("format") === "binary";
        if (!file && !required.includes(name) && value.getIn([name, "value"]) === undefined) value = value.setIn([name, "value"], "");
      });
      return h(Original, Object.assign({}, props, { requestBodyValue: value }));
    };
  }

  function BlobPreview({ blob, type }) {
    const url = React.useMemo(() => URL.createObjectURL(blob), [blob]);
    React.useEffect(() => () => URL.revokeObjectURL(url), [url]);
    if (type.startsWith("video/")) return h("video", { controls: true, src: url, className: "cms-preview", style: { maxWidth: "100%" } });
    if (type.startsWith("audio/")) return h("audio", { controls: true, src: url, className: "cms-preview" });
    return h("object", { data: url, type: "application/pdf", className: "cms-preview", width: "100%", height: "480" },
      h("a", { href: url, download: "document.pdf" }, "Download the PDF"));
  }

  function previewMedia(Original) {
    return (props) => {
      const type = String(props.contentType || "").toLowerCase();
      const media = /^(video\\/|audio\\/|application\\/pdf)/.test(type);
      return media && props.content instanceof Blob ? h(BlobPreview, { blob: props.content, type }) : h(Original, props);
    };
  }

  return { wrapComponents: { RequestBody: emptyOptionalFields, responseBody: previewMedia } };
};
`;
