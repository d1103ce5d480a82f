// The typed client from Node (the package's "./client" export; `npm run build` builds it):
// upload a file with progress, list, download it verified, mint a signed link.
//   CMS_URL=http://127.0.0.1:9082 node examples/node-client.mjs <file> [tenant]
// With auth on, set CMS_TOKEN (or use passwordGrant({ issuer, clientId, username, password })).
import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { Readable, Writable } from "node:stream";
import { CmsProblem, createCmsClient, staticToken } from "content-resource-service/client";

const [file, tenant = "examples"] = process.argv.slice(2);
if (!file) {
  console.error("usage: node examples/node-client.mjs <file> [tenant]");
  process.exit(2);
}
const cms = createCmsClient({
  baseUrl: process.env.CMS_URL ?? "http://127.0.0.1:9082",
  ...(process.env.CMS_TOKEN ? { token: staticToken(process.env.CMS_TOKEN) } : {}),
});

async function run() {
  const { size } = await stat(file);
  const created = await cms.upload(
    { resourceTenantId: tenant, resourceAuthor: "node example", resourceName: basename(file) },
    Readable.toWeb(createReadStream(file)),
    { size, onProgress: (sent) => process.stderr.write(`\ruploaded ${sent}/${size} bytes`) },
  );
  process.stderr.write("\n");
  console.log("created", created.resourceURI, created.sha256);

  const page = await cms.listResources({ resourceTenantId: tenant, namePrefix: basename(file) });
  console.log("listed", page.resources.length, "resource(s) named", basename(file));

  // The body errors with ChecksumMismatch if the bytes do not hash to the resource's SHA-256.
  const download = await cms.download(created.resourceURI);
  await download.body.pipeTo(Writable.toWeb(createWriteStream(`${file}.downloaded`)));
  console.log("downloaded and verified", download.size, "bytes to", `${file}.downloaded`);

  const link = await cms.signedLink(created.resourceURI, 3600);
  console.log("signed link", link.url);
}

try {
  await run();
} catch (err) {
  // One line, no stack: a refusal is a CmsProblem whose message is the status, the code and the
  // server's detail ("401 UNAUTHENTICATED: a bearer access token is required"); with a network
  // error, fetch's cause says why no answer came.
  const reason = err instanceof CmsProblem ? err.message : `${err.message}${err.cause ? ` (${err.cause.code ?? err.cause.message})` : ""}`;
  console.error(`\nnode-client: ${reason}`);
  process.exitCode = 1;
}
