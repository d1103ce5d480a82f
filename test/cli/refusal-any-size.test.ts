/**
 * Issue 25 §3, the CLI's side: `cms put --no-direct` streams a 100 MB file through uploadResource;
 * refused before its file is read (401, 403, 413, 507) it prints that refusal — `cms: 401
 * UNAUTHENTICATED: … — run cms login` — on one line and exits 1, never `cms: cannot reach …: EPIPE`.
 * By default `cms put` asks createUploadURL first (src/cli/direct-put.ts): it hashes the file, then
 * sends only its size and hash to be refused; one case shows that path's refusal too. The servers run as processes of
 * their own (test/helpers/refusal-stack.ts); the file is sparse, in the stack's temp dir.
 */
import { truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { refusalStackPerFile, withServerFigures } from "../helpers/refusal-stack.js";
import { runCms } from "./run-cms.js";

const { figures, stack } = refusalStackPerFile("cms put, 100 MB file");

// The refusals run at once: each is a cms process (mostly start-up) and the server's log line for the
// body it left unread; none changes what another is refused for (401/403 are refused before any
// write, 507 by the quota of its own tenant, 413 on a server of its own).
describe.concurrent("cms put of a 100 MB file refused before its file is read prints the refusal", () => {
  it.each([
    [401, "no token, auth on", /^cms: 401 UNAUTHENTICATED: .+ — run cms login$/],
    [403, "a token without the creator role", /^cms: 403 FORBIDDEN: .+/],
    [413, "over CMS_MAX_RESOURCE_BYTES", /^cms: 413 PAYLOAD_TOO_LARGE: .+/],
    [507, "over the tenant's bytes quota", /^cms: 507 QUOTA_EXCEEDED: .+/],
  ] as const)("--no-direct, %i (%s)", async (status, _kind, line) => {
    const refusal = stack().refusals.find((r) => r.status === status)!;
    const env: Record<string, string> = { CMS_URL: refusal.baseUrl, XDG_CONFIG_HOME: `${stack().dir}/config` };
    if (refusal.token) env.CMS_TOKEN = refusal.token;
    const { result, ms, server } = await withServerFigures(stack(), refusal.baseUrl, () =>
      runCms(["put", stack().bigFile, "--tenant", refusal.tenant, "--no-direct"], env, stack().dir),
    );
    expect(result.code).toBe(1);
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(line);
    figures.push(
      `  ${status}: exit ${result.code}, "${lines[0]}"; server read ${server.receivedBytes} B (${server.outcome}), ${ms} ms`,
    );
  });

  it("by upload URL (the default), 413: createUploadURL's refusal", async () => {
    const refusal = stack().refusals.find((r) => r.status === 413)!;
    const env = { CMS_URL: refusal.baseUrl, XDG_CONFIG_HOME: `${stack().dir}/config`, CMS_TOKEN: refusal.token! };
    // One byte over the limit (16 MiB): the file is hashed before createUploadURL, so not 100 MB.
    const overLimit = join(stack().dir, "over-limit.bin");
    await writeFile(overLimit, "");
    await truncate(overLimit, 16 * 1024 * 1024 + 1);
    const result = await runCms(["put", overLimit, "--tenant", refusal.tenant], env, stack().dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^cms: 413 PAYLOAD_TOO_LARGE: .+\n$/);
  });
});
