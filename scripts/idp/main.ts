// CLI for the dev IdP (`npm run idp`): CMS_IDP_PORT, CMS_IDP_APP_ORIGINS, CMS_IDP_CLIENT_SECRET, CMS_IDP_USERS.
// Runs until SIGINT/SIGTERM, then closes the listener cleanly.
import { readFileSync } from "node:fs";
import { DEFAULT_APP_ORIGINS, DEFAULT_CLIENT_SECRET, KEYCLOAK_ROUTES, startIdp } from "./server.js";
import { type IdpUser, parseUsersFile } from "./users.js";

function parsePort(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return 8080;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`CMS_IDP_PORT is not a port: ${raw}`);
  return port;
}

function parseOrigins(raw: string | undefined): string[] {
  const origins = (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return origins.length > 0 ? origins : DEFAULT_APP_ORIGINS;
}

/** Extra users (e.g. with a `tenants` claim) from the JSON file CMS_IDP_USERS names. */
function readUsers(file: string | undefined): IdpUser[] {
  if (file === undefined || file.trim() === "") return [];
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(
      `CMS_IDP_USERS (${file}) cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  return parseUsersFile(text, file);
}

const clientSecret = process.env.CMS_IDP_CLIENT_SECRET || DEFAULT_CLIENT_SECRET;
let users: IdpUser[];
try {
  users = readUsers(process.env.CMS_IDP_USERS);
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
const idp = await startIdp({
  port: parsePort(process.env.CMS_IDP_PORT),
  appOrigins: parseOrigins(process.env.CMS_IDP_APP_ORIGINS),
  clientSecret,
  users,
});
// Signals are handled before the first line is printed: whoever waits for that line may stop it at once.
let stopping = false;
const stop = (signal: NodeJS.Signals): void => {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping dev IdP`);
  idp.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);

const tokenUrl = `${idp.issuer}${KEYCLOAK_ROUTES.token}`;
console.log(`issuer:    ${idp.issuer}`);
console.log(`token URL: ${tokenUrl}`);
console.log(
  `try:       curl -s -X POST ${tokenUrl} -H 'Content-Type: application/x-www-form-urlencoded' ` +
    `-d 'client_id=cms-server&client_secret=${clientSecret === DEFAULT_CLIENT_SECRET ? clientSecret : "<secret>"}` +
    `&username=cms-creator&password=cms-creator&grant_type=password'`,
);
