/**
 * Keep-alive connections for node-fetch.ts. One agent per pool key: scheme, the checked address the
 * socket was connected to, port and Host/SNI name. A pooled socket is therefore only ever reused by a
 * request whose name was resolved and checked to that same address, by the same fetcher (so under the
 * same address policy); a name that now resolves elsewhere gets another key and a new connection.
 * A TCP connect (and close) per download was ≈ 4 % of an ingest's CPU (bench ingest profile, Node 20).
 */
import http from "node:http";
import https from "node:https";

export interface PoolKey {
  tls: boolean;
  /** The checked address the connection is pinned to. */
  address: string;
  port: number;
  /** Host name as sent in Host and SNI (unbracketed). */
  hostname: string;
}

export interface ConnectionPoolOptions {
  /** Idle sockets kept per key (requests in flight are never limited: none waits for a socket). */
  maxIdlePerKey: number;
  /** Keys kept; beyond it the least recently used ones with nothing in flight are dropped. */
  maxKeys: number;
  /** An idle socket is closed after this long unused. */
  idleMs: number;
}

export interface ConnectionPool {
  /** The agent for `key`'s connections. */
  agentFor(key: PoolKey): http.Agent;
  /** Keys held now (tests). */
  size(): number;
}

const count = (sockets: NodeJS.ReadOnlyDict<unknown[]>) =>
  Object.values(sockets).reduce((n, list) => n + (list?.length ?? 0), 0);
/** No socket in use and no request waiting: dropping the agent closes only idle sockets. */
const unused = (agent: http.Agent) => count(agent.sockets) === 0 && count(agent.requests) === 0;

export function createConnectionPool({ maxIdlePerKey, maxKeys, idleMs }: ConnectionPoolOptions): ConnectionPool {
  const agents = new Map<string, http.Agent>();

  const drop = (name: string, agent: http.Agent) => {
    agents.delete(name);
    agent.destroy();
  };

  return {
    agentFor(key) {
      const name = `${key.tls ? "https" : "http"} ${key.address} ${key.port} ${key.hostname}`;
      const known = agents.get(name);
      if (known) {
        agents.delete(name); // re-inserted: Map order is recency
        agents.set(name, known);
        return known;
      }
      // `timeout` closes a free socket after idleMs (Node's agent destroys free sockets on it; a
      // shorter Keep-Alive hint from the origin wins). On a socket in use it only emits 'timeout',
      // which nothing here listens to: node-fetch.ts keeps its own idle timers.
      const options: http.AgentOptions = {
        keepAlive: true,
        maxFreeSockets: maxIdlePerKey,
        timeout: idleMs,
        scheduling: "lifo",
      };
      const agent = key.tls ? new https.Agent(options) : new http.Agent(options);
      agents.set(name, agent);
      for (const [other, candidate] of agents) {
        if (agents.size <= maxKeys) break;
        if (candidate !== agent && unused(candidate)) drop(other, candidate);
      }
      return agent;
    },

    size: () => agents.size,
  };
}
