/**
 * keycloak/realm-cms.json cannot be imported into a real Keycloak here (not on npm or apt), so this
 * checks the parts the server relies on: every user has client roles of cms-server (realm roles are
 * opt-in) and every client's access tokens name cms-server in aud (an audience mapper).
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";

interface Mapper {
  protocolMapper: string;
  config: Record<string, string>;
}
interface Realm {
  clients: { clientId: string; protocolMappers?: Mapper[] }[];
  users: { username: string; clientRoles?: Record<string, string[]> }[];
  roles: { client: Record<string, { name: string }[]> };
}

const realm = JSON.parse(await readFile(new URL("../../keycloak/realm-cms.json", import.meta.url), "utf8")) as Realm;

describe("keycloak/realm-cms.json", () => {
  it("defines admin, creator and consumer as client roles of cms-server and gives each dev user one", () => {
    expect(realm.roles.client["cms-server"]?.map((r) => r.name).sort()).toEqual(["admin", "consumer", "creator"]);
    const roles = Object.fromEntries(realm.users.map((u) => [u.username, u.clientRoles?.["cms-server"]]));
    expect(roles).toEqual({ "cms-admin": ["admin"], "cms-creator": ["creator"], "cms-consumer": ["consumer"] });
  });

  it.each(["cms-server", "cms-explorer"])("puts cms-server into aud of %s's access tokens", (clientId) => {
    const client = realm.clients.find((c) => c.clientId === clientId);
    const audience = client?.protocolMappers?.find((m) => m.protocolMapper === "oidc-audience-mapper");
    expect(audience?.config).toMatchObject({ "included.client.audience": "cms-server", "access.token.claim": "true" });
  });
});
