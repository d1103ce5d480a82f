/**
 * `cms`: the service from a terminal, on the typed client (src/client). Every command takes
 * --url (or CMS_URL) and --json (the API's JSON on stdout, for scripts); errors are one line on
 * stderr and a non-zero exit code.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { Command, InvalidArgumentError, Option } from "commander";
import { CmsProblem, createCmsClient, requestToken } from "../client/index.js";
import { DEFAULT_MEDIA_TYPE, isZipMediaType, mediaTypeForPath } from "../lib/media-types.js";
import { registerDescribeCommands } from "./commands/describe.js";
import { registerTenantsCommand } from "./commands/tenants.js";
import { registerUpdate } from "./commands/update.js";
import { forgetLock, heldLock, rememberLock } from "./held-locks.js";
import { formatBytes } from "./progress.js";
import { readHidden } from "./prompt.js";
import { deleteSession, saveSession, sessionFrom, sessionToken } from "./session.js";
import { getToFile, getToStdout } from "./transfer.js";
import { putFileDirectOrStreamed } from "./direct-put.js";

interface GlobalOptions {
  url: string;
  json?: boolean;
}

/** Set by the self-contained bundle of packages/cli (scripts/build-cli-package.mjs), which has no package.json above it. */
declare const __CMS_VERSION__: string | undefined;
// Otherwise read beside the code, so an installed package reports its own version.
const version =
  typeof __CMS_VERSION__ === "string"
    ? __CMS_VERSION__
    : (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

const program = new Command("cms")
  .description("Content resource service from the command line")
  .version(version, "-V, --version", "print the version")
  .addOption(new Option("--url <url>", "server URL").env("CMS_URL").default("http://127.0.0.1:9082"))
  .option("--json", "print the API's JSON (for scripts)")
  .configureOutput({ outputError: (text, write) => write(text.split("\n")[0]!.replace(/^error: /, "cms: ") + "\n") });

const globals = () => program.opts<GlobalOptions>();
const client = () => createCmsClient({ baseUrl: globals().url, token: sessionToken });
const quiet = () => !!globals().json;
/** The server, as locks are remembered per server (held-locks.ts). */
const server = () => globals().url.replace(/\/+$/, "");

/** Rows as columns padded to their widest cell. */
function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => row[i]?.length ?? 0))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** A resourceURI as given, or the one of a UID (commands accept either, as `get` does). */
async function resourceUriOf(resource: string): Promise<string> {
  return resource.includes("/") ? resource : (await client().queryResource(resource)).resourceURI;
}

/** --json prints the API's answer; otherwise a short human line. */
function print(json: unknown, human: string) {
  process.stdout.write(globals().json ? `${JSON.stringify(json)}\n` : `${human}\n`);
}

const DURATION = /^(\d+)([smhd]?)$/;
function parseDuration(text: string): number {
  const m = DURATION.exec(text);
  if (!m) throw new InvalidArgumentError("use a number of seconds or e.g. 90s, 30m, 1h, 7d");
  return Number(m[1]) * { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as "" | "s" | "m" | "h" | "d"];
}
function parsePositive(text: string): number {
  const n = Number(text.replace(/[kK]$/, "e3").replace(/[mM]$/, "e6"));
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError("must be a positive whole number");
  return n;
}

/**
 * What `put` tells the server a file is when --type is not given: its name's type, which the server
 * checks against the bytes (a PNG named .jpg is stored as PNG; a .txt, which has no signature to
 * contradict, as text/plain). Never a zip type: only --type asks for a package.
 */
function guessedType(file: string): string | undefined {
  const type = mediaTypeForPath(file);
  return type === DEFAULT_MEDIA_TYPE || isZipMediaType(type) ? undefined : type;
}

/** `put`'s options; --direct / --no-direct: undefined unless given (src/cli/direct-put.ts). */
type PutArgs = { tenant: string; name?: string; type?: string; author: string; direct?: boolean };

program
  .command("put")
  .description("upload a file (streamed, with progress) or register a URL")
  .argument("<source>", "a file, or an http(s) URL the server downloads")
  .requiredOption("--tenant <tenant>", "tenant id")
  .option("--name <name>", "resource name (default: the file's name)")
  .option(
    "--type <mediaType>",
    "media type, stored as given (default: the server decides: a file's name's type or a URL's origin's, checked against the bytes; a zip becomes a package only with --type)",
  )
  .option("--author <author>", "author", process.env.USER || "cms")
  .option("--direct", "send the file by createUploadURL only (default: when the server offers it)")
  .option("--no-direct", "stream the file through the service (uploadResource)")
  .action(async (source: string, o: PutArgs) => {
    const isUrl = /^https?:\/\//i.test(source);
    const resourceName = o.name ?? basename(isUrl ? new URL(source).pathname : source);
    const fields = {
      resourceTenantId: o.tenant,
      resourceAuthor: o.author,
      resourceName,
      ...(o.type ? { resourceMediaType: o.type } : {}),
    };
    // Without --type the server decides: a URL's origin Content-Type, a file's name's type, checked against the bytes.
    const created = isUrl
      ? await client().createResource({ ...fields, resourceExternalURI: source })
      : await putFileDirectOrStreamed(
          client(),
          source,
          { ...fields, fileType: guessedType(source) },
          { quiet: quiet(), direct: o.direct },
        );
    print(created, `${created.resourceURI}  ${formatBytes(created.size)}  sha256:${created.sha256}`);
  });

program
  .command("get")
  .description("download a resource: progress, resumes after an interruption, verifies SHA-256")
  .argument("<resource>", "resourceURI (<UID>/<name>) or UID")
  .option("-o, --output <file>", "where to write (`-` = stdout; default: the resource's name)")
  .option("--limit-rate <bytes>", "at most this many bytes per second (k/M suffixes)", parsePositive)
  .action(async (resource: string, o: { output?: string; limitRate?: number }) => {
    if (o.output === "-") return void (await getToStdout(client(), resource));
    const name = await resourceUriOf(resource);
    const got = await getToFile(client(), resource, o.output ?? basename(name), {
      quiet: quiet(),
      limitRate: o.limitRate,
    });
    print(
      got,
      `${got.file}  ${formatBytes(got.size)}  sha256 verified${got.resumedFrom ? ` (resumed at ${formatBytes(got.resumedFrom)})` : ""}`,
    );
  });

registerDescribeCommands(program, {
  client,
  print,
  table,
  parsePositive,
  heldLockId: async (uid) => (await heldLock(server(), uid))?.lockID,
});

program
  .command("ls")
  .description("list a tenant's resources, oldest first")
  .requiredOption("--tenant <tenant>", "tenant id")
  .option("--prefix <prefix>", "only names starting with this")
  .option("--limit <n>", "at most this many (≤ 200)", parsePositive)
  .option("--bytes", "sizes in bytes (the default when not on a terminal)")
  .action(async (o: { tenant: string; prefix?: string; limit?: number; bytes?: boolean }) => {
    const page = await client().listResources({
      resourceTenantId: o.tenant,
      ...(o.prefix ? { namePrefix: o.prefix } : {}),
      ...(o.limit ? { limit: o.limit } : {}),
    });
    // A person at a terminal reads KiB under a header; a script (a pipe, or --bytes) reads bytes.
    const human = process.stdout.isTTY && !o.bytes;
    const rows = page.resources.map((r) => [
      r.resourceURI,
      r.mediaType,
      human ? formatBytes(r.size) : String(r.size),
      r.createdAt,
    ]);
    print(
      page,
      human
        ? table([["RESOURCE", "TYPE", "SIZE", "CREATED"], ...rows])
        : rows.map((r) => r.join("\t")).join("\n") || "(none)",
    );
  });

program
  .command("info")
  .description("a resource's metadata")
  .argument("<uid>", "resource UID")
  .action(async (uid: string) => {
    const r = await client().queryResource(uid);
    const held = await heldLock(server(), uid);
    const heldLine = held ? `\n  locked by you: ${held.lockID} until ${held.lockExpirationDate}` : "";
    print(
      held ? { ...r, heldLock: { lockID: held.lockID, lockExpirationDate: held.lockExpirationDate } } : r,
      `${r.resourceURI}\n  type ${r.mediaType}, ${formatBytes(r.size)}, by ${r.author}, ${r.createdAt}\n  sha256 ${r.sha256}${heldLine}`,
    );
  });

program
  .command("rm")
  .description("delete a resource (lock, delete, unlock)")
  .argument("<uid>", "resource UID")
  .action(async (uid: string) => {
    const deleted = await client().remove(uid);
    print(deleted, `deleted ${deleted.resourceURI}`);
  });

registerUpdate(program, { client, quiet, print });

program
  .command("lock")
  .description("lock a resource for update/delete; prints the lock ID and remembers it for `cms unlock`")
  .argument("<uid>", "resource UID")
  .action(async (uid: string) => {
    const locked = await client().lock(uid);
    await rememberLock(server(), locked);
    print(locked, `${locked.lockID}  until ${locked.lockExpirationDate}`);
  });

program
  .command("unlock")
  .description("release a lock you hold")
  .argument("<uid>", "resource UID")
  .option("--lock-id <id>", "the lock ID (default: the one `cms lock` took here)")
  .action(async (uid: string, o: { lockId?: string }) => {
    const held = await heldLock(server(), uid);
    const lockID = o.lockId ?? held?.lockID;
    if (!lockID)
      throw new Error(`no lock of ${uid} remembered for ${server()} (none taken here, or it expired): pass --lock-id`);
    const author = held?.lockID === lockID ? held.author : (await client().queryResource(uid)).author;
    try {
      await client().unlock({ resourceUID: uid, author, lockID });
    } catch (err) {
      // The server says there is no such lock (expired, released elsewhere, resource gone): stop remembering it.
      if (err instanceof CmsProblem && (err.problem.code === "LOCK_NOT_HELD" || err.problem.code === "NOT_FOUND"))
        await forgetLock(server(), uid, lockID);
      throw err;
    }
    await forgetLock(server(), uid, lockID);
    print({ resourceUID: uid, unlocked: true }, `unlocked ${uid}`);
  });

program
  .command("link")
  .description("a signed, expiring URL that needs no token")
  .argument("<resource>", "resourceURI (<UID>/<name>) or UID")
  .option("--expires <duration>", "lifetime: seconds or 90s, 30m, 1h, 7d", parseDuration, 3600)
  .action(async (resource: string, o: { expires: number }) => {
    const link = await client().signedLink(await resourceUriOf(resource), o.expires);
    print(link, link.url);
  });

program
  .command("login")
  .description("log in with the password grant; the token is cached (0600) in your config dir")
  .requiredOption("--issuer <url>", "identity provider issuer", process.env.CMS_ISSUER)
  .option("--client-id <id>", "OAuth client", process.env.CMS_CLIENT_ID ?? "cms-server")
  .option(
    "--client-secret <secret>",
    "client secret (confidential clients; or CMS_CLIENT_SECRET)",
    process.env.CMS_CLIENT_SECRET,
  )
  .requiredOption("--username <name>", "user", process.env.CMS_USERNAME)
  .option("--password <password>", "password (or CMS_PASSWORD; asked for on a terminal)", process.env.CMS_PASSWORD)
  .action(
    async (o: { issuer: string; clientId: string; clientSecret?: string; username: string; password?: string }) => {
      const password = o.password || (await readHidden("Password: "));
      if (!password) throw new Error("no password: pass --password, set CMS_PASSWORD, or run cms login on a terminal");
      const client = { client_id: o.clientId, ...(o.clientSecret ? { client_secret: o.clientSecret } : {}) };
      const set = await requestToken(o.issuer, {
        ...client,
        grant_type: "password",
        username: o.username,
        password,
      });
      const file = await saveSession(sessionFrom(o.issuer, o.clientId, o.clientSecret, set));
      print({ loggedIn: o.username, session: file }, `logged in as ${o.username} (token saved in ${file})`);
    },
  );

program
  .command("logout")
  .description("forget the cached login")
  .action(async () => {
    await deleteSession();
    print({ loggedIn: null }, "logged out");
  });

registerTenantsCommand(program, { client, print, table });

/** The server's refusal as one line; a 401 says what to do about it. */
function problemLine({ problem }: CmsProblem): string {
  const line = `${problem.status} ${problem.code}: ${problem.detail}`.replaceAll("\n", " ");
  return problem.status === 401 ? `${line} — run cms login` : line;
}

/** One clear line on stderr, exit code 1 (commander's own usage errors also exit 1). */
function fail(err: unknown): never {
  const line = err instanceof CmsProblem ? problemLine(err) : err instanceof Error ? err.message : String(err);
  process.stderr.write(`cms: ${line.split("\n")[0]}\n`);
  process.exit(1);
}

/** fetch's own failures: no answer came (refused, reset before one arrived, a name that does not resolve). */
function networkFailure(cause: { code?: string; message?: string }): Error {
  const reason = cause.code ?? cause.message;
  const lost = cause.code === "EPIPE" || cause.code === "ECONNRESET" || cause.code === "UND_ERR_SOCKET";
  return new Error(
    lost
      ? `the connection to ${globals().url} broke before an answer came: ${reason}`
      : `cannot reach ${globals().url}: ${reason}`,
  );
}

/** A reader that stopped reading (`cms get … -o - | head`) is a normal end, not an error. */
const isClosedPipe = (err: unknown) => (err as { code?: string } | null)?.code === "EPIPE";
process.stdout.on("error", (err) => {
  if (isClosedPipe(err)) process.exit(0);
  fail(err);
});

program.parseAsync().catch((err: unknown) => {
  if (isClosedPipe(err)) process.exit(0);
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (err instanceof TypeError && cause) fail(networkFailure(cause));
  fail(err);
});
