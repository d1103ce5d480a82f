/** A createResource request with its content inline (`resourceBinary`, base64), author "a". */
export const binaryCreate = (api: string, r: { binary: string; mediaType: string; name: string; tenant: string }) =>
  new Request(`${api}/createResource`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      resourceAuthor: "a",
      resourceBinary: r.binary,
      resourceMediaType: r.mediaType,
      resourceName: r.name,
      resourceTenantId: r.tenant,
    }),
  });
