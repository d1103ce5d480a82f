// The keep-alive pool's keys and bounds (no network: agents are only created, never used).
import { describe, expect, it } from "vitest";
import { createConnectionPool, type PoolKey } from "../../src/origin/node-connection-pool.js";

const KEY: PoolKey = { tls: false, address: "127.0.0.1", port: 8080, hostname: "a.test" };

describe("connection pool", () => {
  it("gives one agent per (scheme, checked address, port, name)", () => {
    const pool = createConnectionPool({ maxIdlePerKey: 4, maxKeys: 32, idleMs: 1000 });
    const agent = pool.agentFor(KEY);
    expect(pool.agentFor({ ...KEY })).toBe(agent);
    const others = [{ tls: true }, { address: "127.0.0.2" }, { port: 8081 }, { hostname: "b.test" }].map((change) =>
      pool.agentFor({ ...KEY, ...change }),
    );
    expect(new Set([agent, ...others]).size).toBe(5);
    expect(pool.size()).toBe(5);
  });

  it("keeps at most maxKeys agents, dropping the least recently used", () => {
    const pool = createConnectionPool({ maxIdlePerKey: 4, maxKeys: 3, idleMs: 1000 });
    const first = pool.agentFor({ ...KEY, port: 1 });
    pool.agentFor({ ...KEY, port: 2 });
    pool.agentFor({ ...KEY, port: 3 });
    expect(pool.agentFor({ ...KEY, port: 1 })).toBe(first); // now the most recent
    pool.agentFor({ ...KEY, port: 4 }); // drops port 2's
    expect(pool.size()).toBe(3);
    expect(pool.agentFor({ ...KEY, port: 1 })).toBe(first);
  });

  it("configures idle sockets to close and be bounded per key", () => {
    const agent = createConnectionPool({ maxIdlePerKey: 2, maxKeys: 3, idleMs: 1500 }).agentFor(KEY);
    expect(agent.maxFreeSockets).toBe(2);
    expect(agent.maxSockets).toBe(Number.POSITIVE_INFINITY);
    expect((agent as unknown as { options: { timeout: number; keepAlive: boolean } }).options).toMatchObject({
      timeout: 1500,
      keepAlive: true,
    });
  });
});
