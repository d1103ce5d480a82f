/**
 * Issue 38's commands: `cms search`, `cms tag <UID> +a -b`, `cms mv <UID> /folder/` and
 * `cms describe <UID> --title … --alt …`. Changes go through updateResourceMetadata with the
 * metadataVersion just read (If-Match), and with the lock `cms lock` took here, if any.
 */
import { type Command, InvalidArgumentError } from "commander";
import type { createCmsClient, DescriptionPatch, Resource } from "../../client/index.js";

export interface DescribeCommandsContext {
  client: () => ReturnType<typeof createCmsClient>;
  /** --json prints `json`; otherwise `human`. */
  print: (json: unknown, human: string) => void;
  table: (rows: string[][]) => string;
  parsePositive: (text: string) => number;
  /** The lockID `cms lock` remembered for this resource here, if any. */
  heldLockId: (uid: string) => Promise<string | undefined>;
}

/** `+a` adds, `-b` removes (case-insensitively, as the server compares tags). */
export function retagged(current: string[], changes: string[]): string[] {
  let tags = [...current];
  for (const change of changes) {
    const tag = change.slice(1);
    if (!/^[+-]/.test(change) || tag === "")
      throw new InvalidArgumentError(`"${change}": write +tag to add or -tag to remove`);
    tags = tags.filter((t) => t.toLowerCase() !== tag.toLowerCase());
    if (change.startsWith("+")) tags.push(tag);
  }
  return tags;
}

/** `key=value` pairs → a metadata patch; `key=` removes the key. Values that are JSON stay JSON. */
function metadataPatch(pairs: string[]): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new InvalidArgumentError(`"${pair}": write key=value (key= removes the key)`);
    const value = pair.slice(at + 1);
    let parsed: unknown = value;
    try {
      parsed = value === "" ? null : JSON.parse(value);
    } catch {
      // plain text
    }
    patch[pair.slice(0, at)] = parsed;
  }
  return patch;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];
/** An empty option value unsets the field. */
const orNull = (value: string | undefined) => (value === undefined ? undefined : value === "" ? null : value);

/** What these commands read of a resource. */
type Described = Pick<Resource, "resourceURI" | "title" | "folder" | "tags" | "metadataVersion">;

const summary = (r: Described) =>
  `${r.resourceURI}\n  ${r.title ?? "(no title)"} in ${r.folder}${r.tags.length ? `, tags ${r.tags.join(", ")}` : ""}`;

export function registerDescribeCommands(program: Command, ctx: DescribeCommandsContext): void {
  /** Patches the resource against the version just read. */
  async function change(uid: string, patchOf: (current: Described) => DescriptionPatch) {
    const client = ctx.client();
    const current: Described = await client.queryResource(uid);
    const lockID = await ctx.heldLockId(uid);
    const updated = await client.updateResourceMetadata(uid, patchOf(current), {
      ifMatch: current.metadataVersion,
      ...(lockID ? { lockID } : {}),
    });
    ctx.print(updated, summary(updated as Described));
  }

  program
    .command("search")
    .description('find a tenant\'s resources: words ANDed, "a phrase", sun* a prefix')
    .argument("[words...]", "what to search for in names, titles, descriptions, alt texts and tags")
    .requiredOption("--tenant <tenant>", "tenant id")
    .option("--tag <tag>", "only resources with this tag (repeatable: all of them)", collect)
    .option("--folder <folder>", "only this folder, e.g. /photos/")
    .option("--recursive", "with --folder: and everything under it")
    .option("--type <mediaType>", "only this media type, or a family: image/*")
    .option("--sort <sort>", "relevance, createdAt, -createdAt or name")
    .option("--limit <n>", "at most this many (≤ 100)", ctx.parsePositive)
    .action(
      async (
        words: string[],
        o: {
          tenant: string;
          tag?: string[];
          folder?: string;
          recursive?: boolean;
          type?: string;
          sort?: string;
          limit?: number;
        },
      ) => {
        const page = await ctx.client().searchResources({
          tenant: o.tenant,
          ...(words.length ? { q: words.join(" ") } : {}),
          ...(o.tag ? { tag: o.tag } : {}),
          ...(o.folder ? { folder: o.folder } : {}),
          ...(o.recursive ? { recursive: "true" as const } : {}),
          ...(o.type ? { mediaType: o.type } : {}),
          ...(o.sort ? { sort: o.sort as "relevance" } : {}),
          ...(o.limit ? { limit: o.limit } : {}),
        });
        const rows = page.items.map((r) => [
          r.resourceUID,
          r.folder,
          r.title ?? "",
          r.resourceURI.split("/").pop() ?? "",
        ]);
        ctx.print(page, rows.length ? ctx.table([["UID", "FOLDER", "TITLE", "NAME"], ...rows]) : "(none)");
      },
    );

  program
    .command("tag")
    .description("add (+tag) and remove (-tag) tags")
    .argument("<uid>", "resource UID")
    .argument("<changes...>", "+tag to add, -tag to remove")
    .allowUnknownOption() // -tag is a change, not an option
    .action((uid: string, changes: string[]) => change(uid, (current) => ({ tags: retagged(current.tags, changes) })));

  program
    .command("mv")
    .description("move a resource to another folder")
    .argument("<uid>", "resource UID")
    .argument("<folder>", "e.g. /photos/2026/ (starts and ends with /)")
    .action((uid: string, folder: string) => change(uid, () => ({ folder })));

  program
    .command("describe")
    .description("set a resource's title, description, alt text or metadata (an empty value unsets)")
    .argument("<uid>", "resource UID")
    .option("--title <text>", "title (≤ 200 characters)")
    .option("--description <text>", "description (≤ 2000 characters)")
    .option("--alt <text>", "alt text (≤ 1000 characters)")
    .option("--meta <key=value>", "a metadata key (repeatable; key= removes it)", collect)
    .action((uid: string, o: { title?: string; description?: string; alt?: string; meta?: string[] }) =>
      change(uid, () => ({
        ...(o.title !== undefined ? { title: orNull(o.title) } : {}),
        ...(o.description !== undefined ? { description: orNull(o.description) } : {}),
        ...(o.alt !== undefined ? { altText: orNull(o.alt) } : {}),
        ...(o.meta ? { metadata: metadataPatch(o.meta) } : {}),
      })),
    );
}
