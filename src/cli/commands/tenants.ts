/** `cms tenants`: the tenants the caller may see (listTenants), each with its resources and stored bytes. */
import type { Command } from "commander";
import { type createCmsClient, ok } from "../../client/index.js";
import { formatBytes } from "../progress.js";

/** What a command module needs of main.ts: the client for --url and the login, and its output helpers. */
export interface CommandKit {
  client(): ReturnType<typeof createCmsClient>;
  /** --json prints `json`, else `human`. */
  print(json: unknown, human: string): void;
  /** Rows as columns padded to their widest cell. */
  table(rows: string[][]): string;
}

export function registerTenantsCommand(program: Command, kit: CommandKit): void {
  program
    .command("tenants")
    .description("list the tenants you may see (an admin: all; a token with tenants: its own), with usage")
    .option("--bytes", "sizes in bytes (the default when not on a terminal)")
    .action(async (o: { bytes?: boolean }) => {
      const list = await ok(kit.client().api.GET("/cms/v1.0/tenants"));
      // As `ls`: a person at a terminal reads KiB under a header; a script (a pipe, or --bytes) reads bytes.
      const human = process.stdout.isTTY && !o.bytes;
      const rows = list.tenants.map((t) => [
        t.resourceTenantId,
        String(t.resources),
        human ? formatBytes(t.bytes) : String(t.bytes),
      ]);
      kit.print(
        list,
        human
          ? kit.table([["TENANT", "RESOURCES", "SIZE"], ...rows])
          : rows.map((r) => r.join("\t")).join("\n") || "(none)",
      );
    });
}
